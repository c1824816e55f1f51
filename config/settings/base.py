"""Contexto settings, read from the environment with django-environ.

With nothing set, the embedded default serves: a SQLite file under var/, Celery
tasks run eagerly in-process, and the offline LLM provider. Naming DATABASE_URL,
CELERY_BROKER_URL / REDIS_URL and LLM_BASE_URL switches to the real services.
Every variable is listed in the README's configuration table.
"""

import secrets
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# Local state (embedded SQLite file, generated secret key, static files); elsewhere for a
# throw-away instance (the first-run test) without touching the checkout's own.
VAR_DIR = Path(env("CONTEXTO_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# --- Core -------------------------------------------------------------------

DEBUG = env.bool("DEBUG", default=False)
EMBEDDED = not env("DATABASE_URL", default="")


def _secret_key() -> str:
    key = env("SECRET_KEY", default="")
    if key:
        return key
    if not EMBEDDED:
        # A real deployment shares one key across processes and machines: no default.
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is set.")
    # Embedded mode: one random key per checkout, kept under var/ (never committed).
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_results",
    "django_celery_beat",
    "axes",
    "common",
    "llm",
    "accounts",
    "knowledge",
    "ontology",
    "conversations",
    "explanations",
    "actions",
    "mcp_server",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Serves STATIC_ROOT (admin, contexto.js, the demo) under gunicorn too: nothing else does.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "common.middleware.ApiBodySizeLimitMiddleware",
    "common.middleware.HostileInputMiddleware",
    # Outside everything that queries (sessions, auth): a dropped connection there is retried too.
    "common.db_resilience.DatabaseRetryMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: locks out repeated failed admin logins.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database and cache -----------------------------------------------------

# Parameters bound by the server, and a statement run DB_PREPARE_THRESHOLD times on a connection
# prepared there (psycopg's automatic prepared statements): PostgreSQL then neither parses nor plans
# a turn's statements again. Django binds client-side by default (every statement sent as text with
# its literals, parsed and planned anew). DB_PREPARE_THRESHOLD=0 keeps server-side binding without
# preparing (behind a transaction-mode pooler such as PgBouncer before 1.21, where a prepared
# statement lives in one backend); DB_SERVER_SIDE_BINDING=false restores Django's default.
DB_SERVER_SIDE_BINDING = env.bool("DB_SERVER_SIDE_BINDING", default=True)
DB_PREPARE_THRESHOLD = env.int("DB_PREPARE_THRESHOLD", default=2)


def database_server_side_binding(database: dict) -> None:
    """Apply DB_SERVER_SIDE_BINDING / DB_PREPARE_THRESHOLD to a PostgreSQL database's settings
    (the test settings apply them too, so the suite runs every statement the way production does)."""
    if DB_SERVER_SIDE_BINDING:
        options = database.setdefault("OPTIONS", {})
        options["server_side_binding"] = True
        options["prepare_threshold"] = DB_PREPARE_THRESHOLD or None


DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'contexto.sqlite3'}"),
}
# Per process, at most DB_POOL_MAX_SIZE connections (psycopg's pool): a thread takes one for its
# queries and gives it back before it waits on a model (conversations' agent loop), so threads can
# outnumber connections. The ceiling of a host is WEB_CONCURRENCY × DB_POOL_MAX_SIZE (docs/operations.md).
# DB_POOL_MAX_SIZE=0 falls back to one persistent connection per thread (DB_CONN_MAX_AGE).
DB_POOL_MAX_SIZE = env.int("DB_POOL_MAX_SIZE", default=8)
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Health checks drop broken connections (the pool checks each one it hands out).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    database_server_side_binding(DATABASES["default"])
    if DB_POOL_MAX_SIZE:
        # Django's backend whose pool checks a connection without a round trip unless its socket
        # says the server spoke or hung up (common/postgresql/base.py): two round trips per turn fewer.
        DATABASES["default"]["ENGINE"] = "common.postgresql"
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections (Django requires 0)
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": min(env.int("DB_POOL_MIN_SIZE", default=2), DB_POOL_MAX_SIZE),
            "max_size": DB_POOL_MAX_SIZE,
            # A request waits this long for a free connection, then answers 503 DATABASE_UNAVAILABLE.
            "timeout": env.float("DB_POOL_TIMEOUT", default=10.0),
        }
    else:
        # Reuse connections between requests: one per thread.
        DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="")
# Redis down must not take the API down: the cache falls back to local memory for
# CACHE_RETRY_SECONDS at a time (common/cache.py); short socket timeouts bound a hung Redis.
CACHE_OPTIONS = {
    "socket_connect_timeout": env.float("CACHE_SOCKET_TIMEOUT", default=0.5),
    "socket_timeout": env.float("CACHE_SOCKET_TIMEOUT", default=0.5),
    "retry_seconds": env.float("CACHE_RETRY_SECONDS", default=5.0),
}
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "common.cache.FailOpenRedisCache", "LOCATION": REDIS_URL, "OPTIONS": CACHE_OPTIONS}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Celery ------------------------------------------------------------------

CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
# No broker named: run tasks in-process so the embedded default needs no services.
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = "django-db"
CELERY_RESULT_EXTENDED = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_TRACK_STARTED = True
# One message reserved per worker process, acknowledged after the task ran: a killed worker
# holds back at most the task it was running (redelivered after the visibility timeout);
# everything else stays in the queue for the other workers instead of waiting out that timeout.
# Every task is idempotent (a status guards it), so running one again after a lost worker is safe.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Global limits so a stuck LLM call can never pin a worker forever.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=60)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=90)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE: dict = {}

# --- Auth and API -----------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "admin:login"

# Admin login throttling (django-axes): after ADMIN_LOGIN_FAILURE_LIMIT failed passwords for one
# username from one address, that pair is locked out for ADMIN_LOGIN_COOLOFF_MINUTES (429).
# API tokens do not go through authenticate(), so this guards the password logins only.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("ADMIN_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("ADMIN_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Behind a reverse proxy, the number of proxies whose X-Forwarded-For entries to trust.
AXES_IPWARE_PROXY_COUNT = env.int("AXES_PROXY_COUNT", default=0) or None
AXES_VERBOSE = False

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # DRF's token authentication, with the caller's membership and tenant in the same query.
        "accounts.authentication.TenantTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "accounts.permissions.HasTenant",
    ],
    # Depth-limited, and refuses NUL / lone surrogates in any key or value (common/input_guard.py).
    "DEFAULT_PARSER_CLASSES": ["common.parsers.GuardedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "common.pagination.DefaultPagination",
    "PAGE_SIZE": 50,
    # DRF's UserRateThrottle, counted in two integers per user instead of a list of timestamps
    # rewritten on every request (common/throttling.py).
    "DEFAULT_THROTTLE_CLASSES": ["common.throttling.UserWindowRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": env("API_THROTTLE_RATE", default="1200/min")},
    # Unique component names for nested Input/Output serializers (common/openapi.py).
    "DEFAULT_SCHEMA_CLASS": "common.openapi.ContextoAutoSchema",
    "EXCEPTION_HANDLER": "common.exception_handler.api_exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
if DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"].append("rest_framework.renderers.BrowsableAPIRenderer")

SPECTACULAR_SETTINGS = {
    "TITLE": "Contexto API",
    "DESCRIPTION": "Context engine for LLM agents: knowledge routing, UI context, agent turns, explanations.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Serve Swagger UI from the app itself: the docs work with no internet access.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # A named enum: a generic "ReasonEnum" would collide with any other app's "reason" choices.
    "ENUM_NAME_OVERRIDES": {"HandoffReasonEnum": "conversations.models.HandoffReason"},
    # Every operation documents the error statuses it can answer, in the JSON error shape.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.openapi.add_error_responses",
    ],
}

# Request bodies above this size on /api/ get a 413 before any parsing.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=256 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(API_MAX_BODY_BYTES, 2_621_440)

# --- Knowledge -----------------------------------------------------------------

# The demo page (/demo/): on in the embedded setup, off unless asked for in production.
DEMO_ENABLED = env.bool("DEMO_ENABLED", default=EMBEDDED)

# Folders of bundled Markdown packages, loaded in order. "none" loads no bundled catalog.
# The demo's work-permit packages (knowledge/catalog_demo) ride along when the demo is on.
_default_catalog_dirs = [BASE_DIR / "knowledge" / "catalog"]
if DEMO_ENABLED:
    _default_catalog_dirs.append(BASE_DIR / "knowledge" / "catalog_demo")
_catalog_dirs = env.list("KNOWLEDGE_CATALOG_DIR", default=[str(d) for d in _default_catalog_dirs])
KNOWLEDGE_CATALOG_DIRS = [Path(d) for d in _catalog_dirs if d and d.lower() != "none"]

# Knowledge router (docs/retrieval.md). Its tuning knobs and their defaults live in
# knowledge/retrieval/entries.py (RouterConfig) and fusion.py (signal weights); set
# KNOWLEDGE_ROUTER_WEIGHTS, KNOWLEDGE_ROUTER_RRF_K, KNOWLEDGE_FIELD_WEIGHTS,
# KNOWLEDGE_LISTED_COVERAGE, KNOWLEDGE_FULL_COVERAGE, KNOWLEDGE_UNKNOWN_TERM_WEIGHT,
# KNOWLEDGE_FULL_RELATIVE_FUSED or KNOWLEDGE_FEEDBACK_MIN_WEIGHT here only to override them.

# Full bodies per part of the message, and the token budget of the first part;
# each further part adds half of it (asking two things costs a bit more).
KNOWLEDGE_MAX_FULL_PER_PART = env.int("KNOWLEDGE_MAX_FULL_PER_PART", default=3)
KNOWLEDGE_BUDGET_TOKENS = env.int("KNOWLEDGE_BUDGET_TOKENS", default=2000)
# Fetch feedback: half-life of the signal, and how close (term Jaccard) a new
# question must be to a recorded one.
KNOWLEDGE_FEEDBACK_HALF_LIFE_DAYS = env.float("KNOWLEDGE_FEEDBACK_HALF_LIFE_DAYS", default=14.0)
KNOWLEDGE_FEEDBACK_SIMILARITY = 0.6
# Another wording of the same need (same best entry before feedback, top entries
# overlapping this much) inherits the feedback too: paraphrases share few words.
KNOWLEDGE_FEEDBACK_SIGNATURE_SIMILARITY = 0.6
# ... or when the two questions' sentence-embedding vectors have at least this cosine (chosen by
# leave-one-catalog-out over the dev splits' question pairs; docs/retrieval.md, "Fetch feedback").
KNOWLEDGE_FEEDBACK_VECTOR_SIMILARITY = 0.86
# Query expansion (docs/retrieval.md, chosen by leave-one-catalog-out CV on the dev
# splits): English/Spanish words the catalog does not hold are translated into its
# language with the FreeDict lexicon at this weight (0 turns it off). Cognates (off)
# and curator synonym sets (0.8) have their defaults in RouterConfig
# (KNOWLEDGE_COGNATE_WEIGHT, KNOWLEDGE_SYNONYM_WEIGHT override them).
KNOWLEDGE_CATALOG_LANGUAGE = env.str("KNOWLEDGE_CATALOG_LANGUAGE", default="pt")
KNOWLEDGE_LEXICON_WEIGHT = env.float("KNOWLEDGE_LEXICON_WEIGHT", default=0.5)
# A keyword or BM25 hit below the full-body threshold keeps this share of its rank's fused score
# (RouterConfig's default, 0.25, chosen by leave-one-catalog-out; docs/retrieval.md, "Weak lexical
# hits"); 1: ranks alone. Set here only when the environment names it.
if env.str("KNOWLEDGE_WEAK_LEXICAL_FACTOR", default=""):
    KNOWLEDGE_WEAK_LEXICAL_FACTOR = env.float("KNOWLEDGE_WEAK_LEXICAL_FACTOR")
# The weight of the "questions" signal: the accepted example questions' words, for messages of one
# part (fusion.DEFAULT_WEIGHTS: 1, chosen by leave-one-catalog-out; docs/retrieval.md, "The example
# questions' words"); 0 turns it off. Set here only when the environment names it.
if _questions_weight := env.str("KNOWLEDGE_QUESTIONS_WEIGHT", default="").strip():
    try:
        KNOWLEDGE_ROUTER_WEIGHTS = {"questions": float(_questions_weight)}
    except ValueError:
        KNOWLEDGE_ROUTER_WEIGHTS = {"questions": -1.0}
    if not 0 <= KNOWLEDGE_ROUTER_WEIGHTS["questions"] <= 100:
        raise ImproperlyConfigured(
            f"KNOWLEDGE_QUESTIONS_WEIGHT must be a number from 0 (off) to 100, not {_questions_weight!r}"
        )
# Curation-time expansion: when a revision's content is saved and a real model is
# configured (not the offline provider), a Celery task asks it for en/es search terms;
# curators accept or edit them in the admin (knowledge/search_terms.py).
KNOWLEDGE_SEARCH_TERMS_ON_SAVE = env.bool("KNOWLEDGE_SEARCH_TERMS_ON_SAVE", default=True)
# Each saved revision's passage vector for the router's dense signal (a Celery task on commit;
# knowledge/embeddings.py). Off, vectors come only from `manage.py embed_packages`.
KNOWLEDGE_EMBED_ON_SAVE = env.bool("KNOWLEDGE_EMBED_ON_SAVE", default=True)
# With it on, Celery beat also embeds, every this many seconds, current revisions that lack a vector
# of the router's model (a save whose task was lost; every revision after a model upgrade). 0: never.
KNOWLEDGE_EMBED_SWEEP_INTERVAL = env.int("KNOWLEDGE_EMBED_SWEEP_INTERVAL", default=600)
if KNOWLEDGE_EMBED_ON_SAVE and KNOWLEDGE_EMBED_SWEEP_INTERVAL > 0:
    CELERY_BEAT_SCHEDULE["knowledge-embedding-sweep"] = {
        "task": "knowledge.embedding_sweep",
        "schedule": float(KNOWLEDGE_EMBED_SWEEP_INTERVAL),
    }
# When a question is embedded for the dense signal: "always" (default) embeds every part (the
# embedding also checks that a lexical full body means what the question means); "covered" skips
# it when BM25's best entry is a strong match holding >= 70 % of the question (about a fifth of
# real parts then skip ~20 ms of CPU); "bm25_strong" skips it on any strong BM25 match.
# docs/retrieval.md, "Every part embedded".
KNOWLEDGE_DENSE_GATE = env.str("KNOWLEDGE_DENSE_GATE", default="always").strip()
if KNOWLEDGE_DENSE_GATE not in ("always", "covered", "bm25_strong", "agreement"):
    # Any other word used to behave as "bm25_strong" without a word said.
    raise ImproperlyConfigured(
        f"KNOWLEDGE_DENSE_GATE must be always, covered, bm25_strong or agreement, not {KNOWLEDGE_DENSE_GATE!r}"
    )
# A message of several parts also ranks the entries closest in meaning to the whole message
# (knowledge/retrieval/index.py, message_meaning): "embed" (default, chosen by leave-one-catalog-out)
# embeds the whole message once more (~30 ms of CPU for such a message); "parts" reads it from its
# parts' cosines, with no embedding and most of the gain; "off" turns it off.
# docs/retrieval.md, "The whole message's meaning".
KNOWLEDGE_MESSAGE_MEANING = env.str("KNOWLEDGE_MESSAGE_MEANING", default="embed").strip()
if KNOWLEDGE_MESSAGE_MEANING not in ("embed", "parts", "off"):
    raise ImproperlyConfigured(
        f"KNOWLEDGE_MESSAGE_MEANING must be embed, parts or off, not {KNOWLEDGE_MESSAGE_MEANING!r}"
    )
# A message closer to a general question about everyday life than to any entry gets no full body
# (knowledge/retrieval/background.py): "on" (default, chosen by leave-one-catalog-out) or "off", for a
# catalog whose very subject is one of the background's everyday areas. docs/retrieval.md, "The background".
KNOWLEDGE_BACKGROUND = env.str("KNOWLEDGE_BACKGROUND", default="on").strip()
if KNOWLEDGE_BACKGROUND not in ("on", "off"):
    raise ImproperlyConfigured(f"KNOWLEDGE_BACKGROUND must be on or off, not {KNOWLEDGE_BACKGROUND!r}")
# Identical routed queries are cached per catalog version for this long.
KNOWLEDGE_ROUTE_CACHE_SECONDS = env.int("KNOWLEDGE_ROUTE_CACHE_SECONDS", default=300)

# --- Conversations and LLM --------------------------------------------------------

LLM_BASE_URL = env("LLM_BASE_URL", default="")
LLM_API_KEY = env("LLM_API_KEY", default="")
LLM_MODEL = env("LLM_MODEL", default="gpt-4o-mini")
LLM_PROVIDER = env("LLM_PROVIDER", default="openai" if LLM_BASE_URL else "offline")
LLM_TIMEOUT = env.float("LLM_TIMEOUT", default=60.0)
LLM_MAX_RETRIES = env.int("LLM_MAX_RETRIES", default=1)
MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE = env.int("MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE", default=2)

# --- UI context engine (docs/context-engine.md) -------------------------------------

# The seed's limit: a typical context is 1–3 KB; anything over 5 KB is a DOM dump or a bug.
CONTEXT_MAX_BYTES = env.int("CONTEXT_MAX_BYTES", default=5120)
# A context older than this no longer describes the screen the user is looking at.
CONTEXT_TTL_SECONDS = env.int("CONTEXT_TTL_SECONDS", default=300)
# Tolerated client clock skew for capturedAt in the future.
CONTEXT_MAX_FUTURE_SKEW_SECONDS = env.int("CONTEXT_MAX_FUTURE_SKEW_SECONDS", default=30)
# Keys masked before storage, added to the built-in list (cpf, cnpj, rg, email, telefone, ...).
CONTEXT_SENSITIVE_KEYS = env.list("CONTEXT_SENSITIVE_KEYS", default=[])
# Callable deciding which entities of a context the caller may see (the front end is no authority).
CONTEXT_AUTHORIZER = env(
    "CONTEXT_AUTHORIZER", default="conversations.context.authorization.accessible_entity_authorizer"
)
# Scripted replies for LLM_PROVIDER=replay (demos, the seed's TC-99 replay); see llm/replay.py.
LLM_REPLAY_FIXTURE = env("LLM_REPLAY_FIXTURE", default="")
# Hard stop for any reply loop the enrichment budget does not catch (seed: 10 iterations per turn).
MAX_AGENT_CALLS_PER_TURN = env.int("MAX_AGENT_CALLS_PER_TURN", default=10)
# False: agents get the catalog alone and fetch every body with s=99 (the seed's original design).
AGENT_KNOWLEDGE_ROUTER = env.bool("AGENT_KNOWLEDGE_ROUTER", default=True)
# A turn unanswered this long died with its process; a retry with its Idempotency-Key runs again
# instead of 409 forever. Keep it above the longest turn (GUNICORN_TIMEOUT in scripts/run).
IDEMPOTENT_TURN_STALE_SECONDS = env.int("IDEMPOTENT_TURN_STALE_SECONDS", default=900)

# --- Actions (docs/actions.md) ------------------------------------------------------

# The turn hands UPDATE_FIELD intents to this callable (the action chain); empty: intents are only proposed.
TURN_ACTION_HANDLER = env("TURN_ACTION_HANDLER", default="actions.turn.turn_action")
# HMAC key signing every webhook body; no default: a webhook capability fails honestly without it.
ACTIONS_WEBHOOK_SECRET = env("ACTIONS_WEBHOOK_SECRET", default="")
# A preview older than this can no longer be confirmed (the screen it described has moved on).
ACTION_PREVIEW_TTL_SECONDS = env.int("ACTION_PREVIEW_TTL_SECONDS", default=300)

# --- Explanations ----------------------------------------------------------------

# One narration call per result. Shorter than the agent's LLM_TIMEOUT: nobody waits
# on a narrative (it is optional and its absence is recorded as provider_unavailable),
# and a slow provider must not pin a worker slot and delay the explanations behind it.
EXPLANATION_LLM_TIMEOUT = env.float("EXPLANATION_LLM_TIMEOUT", default=30.0)
# Celery beat re-enqueues results the broker never got (see sweep_pending_explanations).
EXPLANATION_SWEEP_INTERVAL = env.int("EXPLANATION_SWEEP_INTERVAL", default=300)
CELERY_BEAT_SCHEDULE["explanations-sweep-pending"] = {
    "task": "explanations.sweep_pending",
    "schedule": float(EXPLANATION_SWEEP_INTERVAL),
}
# Redis redelivers an unacknowledged (acks_late) message after this many seconds, e.g.
# when a worker died mid-task; it must exceed every task's time limit or a slow task runs twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=600),
    # Redis sockets have no timeout by default: a broker host that drops packets, or
    # a hung Redis, would hold every POST /api/v1/results in its on-commit publish.
    # With these the publish fails, the result stays pending and the sweep sends it.
    "socket_connect_timeout": env.float("CELERY_BROKER_SOCKET_TIMEOUT", default=5.0),
    "socket_timeout": env.float("CELERY_BROKER_SOCKET_TIMEOUT", default=5.0),
}
if CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] <= max(CELERY_TASK_TIME_LIMIT, CELERY_TASK_SOFT_TIME_LIMIT):
    # Below a task's limit, Redis would hand a still-running task to a second worker.
    raise ImproperlyConfigured("CELERY_VISIBILITY_TIMEOUT must exceed CELERY_TASK_TIME_LIMIT.")
# /readyz: each dependency check (database, cache, broker) gets this long, run concurrently.
READYZ_TIMEOUT_SECONDS = env.float("READYZ_TIMEOUT_SECONDS", default=2.0)
# Optional bearer token for /metrics (empty: open, for a scraper on a private network).
METRICS_TOKEN = env("METRICS_TOKEN", default="")

# --- HTTPS (check --deploy) -------------------------------------------------------

# HTTPS=true declares that the site is served over HTTPS (usually behind a TLS-terminating
# proxy): redirect plain HTTP, send HSTS, mark cookies secure. Each can be set on its own.
HTTPS = env.bool("HTTPS", default=False)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=HTTPS)
# Probes and the scraper talk plain HTTP to the process from inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=HTTPS)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=HTTPS)
# The proxy's header saying the client used HTTPS (e.g. "HTTP_X_FORWARDED_PROTO"); trust it only
# when that proxy always sets it, or clients could claim HTTPS.
_proxy_ssl_header = env("SECURE_PROXY_SSL_HEADER", default="")
SECURE_PROXY_SSL_HEADER = (_proxy_ssl_header, "https") if _proxy_ssl_header else None

# --- I18N, static ---------------------------------------------------------------

# API messages default to English; Accept-Language picks Portuguese or Spanish (admin too).
LANGUAGE_CODE = "en-us"
LANGUAGES = [("en", "English"), ("pt-br", "Português (Brasil)"), ("es", "Español")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns on every request until collectstatic fills it

# --- Logging: ids, statuses, counts and durations only; never message text -------

LOG_LEVEL = env("LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # Exception messages and SQL parameters carry user data (a driver error quotes the failing row).
    "filters": {"redact": {"()": "common.log_redaction.RedactingFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["redact"]}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # django-axes names the username and client address on every login attempt.
        "axes": {"level": "ERROR"},
    },
}

# Router index storage and edits (docs/retrieval.md, "Shared index and deltas").
# One memory-mapped segment per catalog content under this directory, shared by
# every process of the host; "none" keeps each process's index in memory.
_index_dir = env.str("KNOWLEDGE_INDEX_DIR", default=str(VAR_DIR / "router_index"))
KNOWLEDGE_INDEX_DIR = None if _index_dir.lower() == "none" else Path(_index_dir)
# Up to this many changed entries are merged into the current base through a
# delta (milliseconds); more, and the catalog is indexed again in full. 0: never.
KNOWLEDGE_INDEX_DELTA_MAX = env.int("KNOWLEDGE_INDEX_DELTA_MAX", default=256)
# Full builds and the compaction after a delta run in a background thread while the
# current index answers (only a process with no index yet waits for one).
KNOWLEDGE_INDEX_BACKGROUND = env.bool("KNOWLEDGE_INDEX_BACKGROUND", default=True)
# Segments kept on disk (the newest ones); older ones are removed after each write.
KNOWLEDGE_INDEX_KEEP = env.int("KNOWLEDGE_INDEX_KEEP", default=2)
# Compaction by the worker: after each catalog change (on commit) the Celery task
# knowledge.router_index_build is queued to write the new content's segment, and a web
# process serving that change through a delta waits up to this many seconds for it (then
# maps it) before compacting itself. 0 (the default without a broker: eager tasks would
# build inside the request): no task is queued and processes compact at once.
KNOWLEDGE_INDEX_COMPACT_WAIT = env.float(
    "KNOWLEDGE_INDEX_COMPACT_WAIT", default=0.0 if CELERY_TASK_ALWAYS_EAGER else 60.0
)
