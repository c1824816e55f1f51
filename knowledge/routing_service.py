"""The knowledge router as a service: per-process index, query cache, feedback.

`route_context(...)` is what the agent turn and `POST /api/v1/context` call.
The retrieval itself is pure code in `knowledge.retrieval`; this module owns:

- the index lifecycle: one `RouterIndex` per process, built from the active
  catalog and rebuilt when the catalog version (in the database) or the
  router settings change. The first thread to notice builds; the others keep
  answering from the old index until the new one is swapped in (one
  reference assignment, atomic under the GIL);
- the query cache: identical requests are served from the Django cache
  (Redis in deployment and tests), keyed by catalog version, feedback
  version and router settings, so any change invalidates by construction;
- fetch feedback lookup (`knowledge.feedback`) and session bookkeeping.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.core.signals import setting_changed
from django.dispatch import receiver

from common.text import query_key
from common.text import retrieval_embeddings
from knowledge import metrics
from knowledge.catalog import get_active_catalog
from knowledge.feedback import (
    feedback_weights,
    fetch_feedback_rows_record,
    related_feedback_weights,
    session_routes,
    session_routes_remember,
)
from knowledge.feedback_version import FEEDBACK_VERSION_KEY
from knowledge.index_store import catalog_dense, compact_wait, delta_index, segment_wait, shared_index_build
from knowledge.models import FetchFeedback
from knowledge.retrieval.entries import RouterConfig
from knowledge.retrieval.index import RouterIndex
from knowledge.retrieval.shaping import RouteResult
from knowledge.retrieval.signals import PartQuery
from knowledge.retrieval.splitting import split_parts

logger = logging.getLogger(__name__)

# The version names the pickled RouteResult's shape: a result cached by older code
# (v2: lists of Delivered; v3: compact rows; v4: a wiki-link reason's text written when shown)
# is never read back into a different class layout or by code without its format function.
ROUTE_CACHE_PREFIX = "knowledge:route:v4:"
# Bumped by `manage.py reindex`: every process rebuilds its index on its next question.
ROUTER_GENERATION_KEY = "knowledge:router:generation"


@dataclass(frozen=True)
class SemanticContext:
    """What the user is looking at: all optional."""

    focus: str | None = None
    parents: tuple[str, ...] = ()
    page: str | None = None

    @classmethod
    def coerce(cls, value) -> SemanticContext:
        """Accept a SemanticContext, a dict (snake or camel case, flat or AgentContext-like) or None."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise TypeError("semantic_context must be a dict or SemanticContext")
        focus = value.get("focus")
        parents = value.get("parents") or value.get("parent_ids") or value.get("parentIds") or ()
        if isinstance(focus, dict):
            parents = focus.get("parentIds") or focus.get("parent_ids") or parents
            focus = focus.get("semanticId") or focus.get("semantic_id")
        page = value.get("page")
        if isinstance(page, dict):
            page = page.get("semanticId") or page.get("semantic_id") or page.get("id")
        return cls(focus=focus or None, parents=tuple(p for p in parents if p), page=page or None)


def router_config() -> RouterConfig:
    """The router's settings (read once per process; a change in tests clears them, see below).

    A setting left out keeps ``RouterConfig``'s default: defaults live there only.
    """
    return router_config_with_fingerprint()[0]


@lru_cache(maxsize=1)
def router_config_with_fingerprint() -> tuple[RouterConfig, str]:
    """The router's settings and their fingerprint, computed once: every turn needs both (the index
    is current only for the same fingerprint), and building them from settings and hashing them as
    JSON cost about 0.1 ms of CPU per turn. Settings do not change in a running process; a test
    that changes a ``KNOWLEDGE_*`` setting (``override_settings``, pytest-django's ``settings``)
    clears this (``_router_config_reset``), so the index is rebuilt as before."""
    config = _router_config_read()
    return config, _config_fingerprint(config)


@receiver(setting_changed)
def _router_config_reset(*, setting: str, **kwargs) -> None:
    if setting.startswith("KNOWLEDGE_"):
        router_config_with_fingerprint.cache_clear()


def _router_config_read() -> RouterConfig:
    default = RouterConfig()
    weights = {**default.weights, **getattr(settings, "KNOWLEDGE_ROUTER_WEIGHTS", {})}
    message_meaning = str(getattr(settings, "KNOWLEDGE_MESSAGE_MEANING", "embed"))
    if message_meaning == "off":
        weights["message"] = 0.0
    return RouterConfig(
        weights=weights,
        message_from_parts=message_meaning == "parts",
        rrf_k=float(getattr(settings, "KNOWLEDGE_ROUTER_RRF_K", default.rrf_k)),
        field_weights={**default.field_weights, **getattr(settings, "KNOWLEDGE_FIELD_WEIGHTS", {})},
        max_full_per_part=int(getattr(settings, "KNOWLEDGE_MAX_FULL_PER_PART", default.max_full_per_part)),
        budget_tokens=int(getattr(settings, "KNOWLEDGE_BUDGET_TOKENS", default.budget_tokens)),
        listed_coverage=float(getattr(settings, "KNOWLEDGE_LISTED_COVERAGE", default.listed_coverage)),
        full_coverage=float(getattr(settings, "KNOWLEDGE_FULL_COVERAGE", default.full_coverage)),
        unknown_term_weight=float(getattr(settings, "KNOWLEDGE_UNKNOWN_TERM_WEIGHT", default.unknown_term_weight)),
        full_relative_fused=float(getattr(settings, "KNOWLEDGE_FULL_RELATIVE_FUSED", default.full_relative_fused)),
        weak_lexical_factor=float(getattr(settings, "KNOWLEDGE_WEAK_LEXICAL_FACTOR", default.weak_lexical_factor)),
        feedback_min_weight=float(getattr(settings, "KNOWLEDGE_FEEDBACK_MIN_WEIGHT", default.feedback_min_weight)),
        lexicon_weight=float(getattr(settings, "KNOWLEDGE_LEXICON_WEIGHT", default.lexicon_weight)),
        cognate_weight=float(getattr(settings, "KNOWLEDGE_COGNATE_WEIGHT", default.cognate_weight)),
        synonym_weight=float(getattr(settings, "KNOWLEDGE_SYNONYM_WEIGHT", default.synonym_weight)),
        catalog_language=str(getattr(settings, "KNOWLEDGE_CATALOG_LANGUAGE", default.catalog_language)),
        dense_gate=str(getattr(settings, "KNOWLEDGE_DENSE_GATE", default.dense_gate)),
        **({} if getattr(settings, "KNOWLEDGE_BACKGROUND", "on") == "on" else _BACKGROUND_OFF),
    )


# KNOWLEDGE_BACKGROUND=off: both margins past any cosine difference (index.background_verdict).
_BACKGROUND_OFF = {"background_margin": 9.0, "background_margin_examples": 9.0}


def _question_vector(text: str) -> np.ndarray | None:
    """A question part's sentence-embedding vector (cached per text), or None with the model off."""
    if not text.strip() or not retrieval_embeddings.enabled():
        return None
    try:
        return retrieval_embeddings.embed_query(text)
    except retrieval_embeddings.EmbeddingsUnavailable:
        return None


def _config_fingerprint(config: RouterConfig) -> str:
    raw = json.dumps(
        {k: (dict(v) if isinstance(v, dict) else v) for k, v in config.__dict__.items()}, sort_keys=True, default=str
    )
    return hashlib.sha1(raw.encode()).hexdigest()[:12]


class RouterIndexHolder:
    """The process's current index; swaps in a new one without blocking readers.

    On a catalog change, a few edited entries are merged into the current
    base through a delta (milliseconds, see ``knowledge.index_store``); a
    bigger change, a settings change or ``reindex`` needs a full build. With
    ``KNOWLEDGE_INDEX_BACKGROUND`` on, full builds (and the compaction that
    follows a delta) run in a background thread while the current index keeps
    answering; only a process with no index at all waits (its first question).
    A committed change also queued the Celery task that writes its segment: the
    compaction, and the full build of a change too big for a delta, first wait
    for that segment (``KNOWLEDGE_INDEX_COMPACT_WAIT``) and map it.
    """

    def __init__(self):
        self._index: RouterIndex | None = None
        self._fingerprint = ""
        self._generation = 0
        self._build_lock = threading.Lock()
        self._background: threading.Thread | None = None
        # Checking "is a background build running?" and starting one is one step: request threads
        # reach it concurrently (a delta's compaction), and only one build may start.
        self._background_lock = threading.Lock()
        # The newest active catalog a question has seen: a background wait for the worker's segment of an
        # older one ends when this moves on.
        self._seen = None
        self.builds = 0
        self.deltas = 0

    @property
    def current(self) -> RouterIndex | None:
        return self._index

    def get(self, generation: int = 0) -> tuple[RouterIndex, str]:
        """The index for the active catalog; ``generation`` (bumped by ``reindex``) forces a rebuild."""
        catalog = get_active_catalog()  # one indexed query when nothing changed
        self._seen = catalog
        config, fingerprint = router_config_with_fingerprint()
        index = self._index
        if index is not None and self._current(index, catalog, fingerprint, generation):
            if index.delta_base is not None and not self._background_running():
                # A delta whose compaction could not start (another build was running): start it now.
                self._start_background(catalog, config, fingerprint, generation, worker_first=True)
            return index, fingerprint
        if index is not None and not self._build_lock.acquire(blocking=False):
            # Another thread is building the new index: keep serving the old one.
            return index, self._fingerprint
        if index is None:
            self._build_lock.acquire()
        try:
            index = self._index
            if index is None or not self._current(index, catalog, fingerprint, generation):
                index = self._next(index, catalog, config, fingerprint, generation)
            return index, self._fingerprint
        finally:
            self._build_lock.release()

    def _current(self, index: RouterIndex, catalog, fingerprint: str, generation: int) -> bool:
        return self._fresh(index, catalog) and self._fingerprint == fingerprint and self._generation == generation

    def _next(self, index, catalog, config: RouterConfig, fingerprint: str, generation: int) -> RouterIndex:
        """Under the build lock: a delta when it will do, else a full build (in the background if one serves)."""
        if index is not None and self._fingerprint == fingerprint and self._generation == generation:
            merged = delta_index(index, catalog, config)
            if merged is not None:
                merged.source = catalog
                self._index = merged
                self.deltas += 1
                self.builds += 1
                self._start_background(catalog, config, fingerprint, generation, worker_first=True)
                return merged
        # A content change too big for a delta: its commit queued the worker's build too (not a settings change
        # or ``reindex``, which queue nothing).
        changed = index is not None and index.version != catalog.version and self._fingerprint == fingerprint
        changed = changed and self._generation == generation
        if index is not None and self._start_background(catalog, config, fingerprint, generation, worker_first=changed):
            return index
        index = self._build(catalog, config)
        self._index, self._fingerprint, self._generation = index, fingerprint, generation
        return index

    def _start_background(self, catalog, config, fingerprint: str, generation: int, *, worker_first=False) -> bool:
        """Build ``catalog``'s full index in a thread, then swap it in if it is still wanted. With
        ``worker_first`` (a delta's compaction, or a catalog change too big for a delta) the thread first
        waits up to ``KNOWLEDGE_INDEX_COMPACT_WAIT`` seconds for the Celery task's segment of that content,
        queued when the change was committed, and maps it."""
        if not getattr(settings, "KNOWLEDGE_INDEX_BACKGROUND", False):
            return False
        with self._background_lock:
            if self._background_running():
                return True  # one at a time: the next question after it finishes catches up
            self._background = threading.Thread(
                target=self._background_build,
                args=(catalog, config, fingerprint, generation, worker_first),
                name="router-index-build",
                daemon=True,
            )
            self._background.start()
        return True

    def _background_build(self, catalog, config, fingerprint: str, generation: int, worker_first=False) -> None:
        try:
            if worker_first and not self._worker_segment(catalog, config):
                return  # a newer change has been seen: its own delta or build follows
            index = self._build(catalog, config)
        except Exception:  # a boundary: the current index keeps serving; logged without content
            logger.exception("router_index_background_build_failed version=%s", catalog.version)
            return
        with self._build_lock:
            current = self._index
            # Not over a newer catalog's delta: that one's own compaction follows.
            if current is None or current.version < catalog.version or current.source is catalog:
                self._index, self._fingerprint, self._generation = index, fingerprint, generation

    def _worker_segment(self, catalog, config: RouterConfig) -> bool:
        """Wait for the worker to write ``catalog``'s segment (``index_store.compact_wait()`` seconds at
        most; then ``_build`` maps it, or writes it itself); False if a newer catalog came meanwhile."""
        wait = compact_wait()
        if wait <= 0:
            return True
        started = time.perf_counter()

        def wanted() -> bool:
            # By version: a snapshot of the same version read again (the catalog cache cleared) is no newer change.
            seen = self._seen
            return seen is None or seen is catalog or seen.version == catalog.version

        found = segment_wait(catalog, config, _config_fingerprint(config), timeout=wait, wanted=wanted)
        logger.info(
            "router_compaction_waited version=%s found=%s ms=%.1f",
            catalog.version,
            found,
            (time.perf_counter() - started) * 1000,
        )
        return found or wanted()

    def _background_running(self) -> bool:
        return self._background is not None and self._background.is_alive()

    def wait_background(self, timeout: float | None = None) -> None:
        """Tests and commands: wait for a background build to finish."""
        thread = self._background
        if thread is not None:
            thread.join(timeout)

    @staticmethod
    def _fresh(index: RouterIndex, catalog) -> bool:
        # Same version and the very catalog snapshot it was built from (a
        # catalog rebuilt at an equal version, e.g. after a test rollback, is new).
        return index.version == catalog.version and index.source is catalog

    def _build(self, catalog, config: RouterConfig, force: bool = False) -> RouterIndex:
        started = time.perf_counter()
        index = shared_index_build(catalog, config, _config_fingerprint(config), force=force, dense=catalog_dense)
        index.source = catalog
        self.builds += 1
        logger.info(
            "router_index_built version=%s entries=%d ms=%.1f",
            catalog.version,
            len(index),
            (time.perf_counter() - started) * 1000,
        )
        return index

    def rebuild(self, generation: int | None = None) -> RouterIndex:
        """Build now from the active catalog (manage.py reindex)."""
        catalog = get_active_catalog()
        config, fingerprint = router_config_with_fingerprint()
        with self._build_lock:
            index = self._build(catalog, config, force=True)
            self._index, self._fingerprint = index, fingerprint
            if generation is not None:
                self._generation = generation
        return index

    def clear(self) -> None:
        with self._build_lock:
            self._index, self._fingerprint = None, ""


index_holder = RouterIndexHolder()


def _cache_key(fingerprint, version, fb_version, message, ctx: SemanticContext, budget, max_full, tenant_id) -> str:
    raw = json.dumps([message, ctx.focus, list(ctx.parents), ctx.page, budget, max_full, tenant_id], ensure_ascii=False)
    digest = hashlib.sha256(raw.encode()).hexdigest()[:32]
    return f"{ROUTE_CACHE_PREFIX}{version}:{fb_version}:{fingerprint}:{digest}"


def route_context(
    *,
    message: str,
    semantic_context: SemanticContext | dict | None = None,
    budget_tokens: int | None = None,
    max_full: int | None = None,
    session_key: str | None = None,
    tenant=None,
    use_cache: bool = True,
) -> RouteResult:
    """What a turn is told: full bodies, listed names, procedures, rules, and why.

    ``semantic_context``: focus semantic ID, its parent IDs and the page's
    semantic ID, all optional. ``budget_tokens``/``max_full`` are per part
    (defaults from settings). ``session_key`` remembers what was listed so a
    later fetch in the session counts as feedback. ``tenant`` scopes feedback.
    """
    started = time.perf_counter()
    ctx = SemanticContext.coerce(semantic_context)
    tenant_id = getattr(tenant, "pk", tenant)
    # One round trip: the versions the route depends on.
    shared = cache.get_many([FEEDBACK_VERSION_KEY, ROUTER_GENERATION_KEY])
    index, fingerprint = index_holder.get(generation=int(shared.get(ROUTER_GENERATION_KEY) or 0))
    fb_version = int(shared.get(FEEDBACK_VERSION_KEY) or 0)
    key = _cache_key(
        f"{fingerprint}:{index.content_digest}",
        index.version,
        fb_version,
        message,
        ctx,
        budget_tokens,
        max_full,
        tenant_id,
    )
    result: RouteResult | None = cache.get(key) if use_cache else None
    cached = result is not None
    if result is None:

        def feedback_for(part_key: str) -> dict[str, float]:
            return feedback_weights(key=part_key, tenant_id=tenant_id, version=fb_version)

        def related_for(part: PartQuery, ranking: list[str]) -> dict[str, float]:
            # The part as the router read it: its vector when the dense signal has one, else embedded
            # only when a feedback row can count through its vector alone (see related_feedback_weights).
            return related_feedback_weights(
                key=part.key,
                ranking=ranking,
                tenant_id=tenant_id,
                version=fb_version,
                vector=part.vector,
                vector_of=lambda: _question_vector(part.text),
                min_weight=index.config.feedback_min_weight,
            )

        result = index.route(
            message,
            focus=ctx.focus,
            parents=ctx.parents,
            page=ctx.page,
            feedback=feedback_for,
            related_feedback=related_for,
            budget_tokens=budget_tokens,
            max_full=max_full,
        )
        if use_cache:
            cache.set(key, result, timeout=int(getattr(settings, "KNOWLEDGE_ROUTE_CACHE_SECONDS", 300)))
    if session_key:
        session_routes_remember(
            session_key=session_key,
            tenant_id=tenant_id,
            listed_ids=result.listed_ids,
            query=message,
        )
    total = (time.perf_counter() - started) * 1000
    metrics.ROUTES.labels(cached="true" if cached else "false").observe(total / 1000)
    result.timings_ms = {**result.timings_ms, "cached": 1.0 if cached else 0.0, "service_total": round(total, 3)}
    logger.info(
        "route_context version=%s parts=%d full=%d listed=%d cached=%s ms=%.2f",
        result.catalog_version,
        len(result.parts),
        len(result.full_rows),
        len(result.listed_rows),
        cached,
        total,
    )
    return result


def reindex() -> RouterIndex:
    """Re-read the whole catalog and rebuild this process's index now, and make every other process
    do the same on its next question (the catalog through the database, the index through the
    shared generation). What picks up edits made with raw SQL, which move no row stamp."""
    from knowledge.services import catalog_reload_everywhere

    catalog_reload_everywhere()
    try:
        generation = cache.incr(ROUTER_GENERATION_KEY)
    except ValueError:
        generation = 1
        cache.set(ROUTER_GENERATION_KEY, generation, timeout=None)
    return index_holder.rebuild(generation=generation)


__all__: Sequence[str] = ["RouteResult", "SemanticContext", "index_holder", "reindex", "route_context"]


# --------------------------------------------------------- fetch feedback


def fetch_feedback_record(
    *,
    query: str,
    package_id: str,
    tenant=None,
    was_listed: bool | None = None,
    acting_user=None,
) -> list[FetchFeedback]:
    """Record that ``package_id`` was fetched for ``query``; returns the rows written.

    ``was_listed``: the caller knows the entry was listed (True) or not
    delivered in full (also True); None lets the router decide by routing the
    question again (a cache hit in practice). An entry that already arrived
    in full teaches nothing and is not recorded. Each part of a multi-part
    question where the entry was relevant gets its own row.
    """
    package_id = (package_id or "").strip()
    if not package_id or not (query or "").strip():
        return []
    if package_id.startswith("::"):
        package_id = package_id[2:]
    parts = split_parts(query) or [query]
    keys = [k for k in (query_key(p) for p in parts) if k]
    if not keys:
        return []
    # Routed also when the caller knows it was listed (a cache hit in practice): each part's
    # ranking before feedback is stored, so another wording of the same need benefits too.
    result = route_context(message=query, tenant=tenant)
    signatures = dict(zip((query_key(p) for p in parts), result.part_rankings))
    if was_listed is None or len(keys) > 1:
        if package_id in result.full_ids:
            return []
        if len(keys) > 1:
            # Keep the parts whose signals mention the entry; all parts if none does.
            mentioned = set()
            for d in result.ranked():
                if d.id == package_id:
                    mentioned = {n.get("part", 0) for n in d.why}
            if mentioned:
                keys = [keys[p] for p in sorted(mentioned) if p < len(keys)] or keys
    elif not was_listed:
        return []
    # Each part's sentence vector: a paraphrase of it inherits by meaning (feedback.related_feedback_weights).
    vectors = {}
    for p in parts:
        vector = _question_vector(p)
        if vector is not None:
            vectors[query_key(p)] = np.asarray(vector, dtype="<f4").tobytes()
    return fetch_feedback_rows_record(
        keys=keys, package_id=package_id, tenant=tenant, signatures=signatures, vectors=vectors
    )


def fetch_feedback_record_for_session(*, session_key: str, package_id: str, tenant=None) -> list[FetchFeedback]:
    """A fetch inside a session: attribute it to the latest route that listed the entry."""
    if not session_key or not package_id:
        return []
    package_id = package_id[2:] if package_id.startswith("::") else package_id
    for route in reversed(session_routes(session_key=session_key, tenant_id=getattr(tenant, "pk", tenant))):
        if package_id in route["listed"]:
            return fetch_feedback_record(query=route["query"], package_id=package_id, tenant=tenant, was_listed=True)
    return []
