"""Test settings: the real PostgreSQL and Redis on 127.0.0.1, never SQLite.

TEST_DATABASE_URL / TEST_REDIS_URL let parallel checkouts use their own database
and Redis db (pytest-django creates test_<name> itself).
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/contexto")

from .base import *  # noqa: E402,F403
from .base import env  # noqa: E402

DEBUG = False
DATABASES = {"default": env.db("TEST_DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/contexto")}
TEST_REDIS_URL = env("TEST_REDIS_URL", default="redis://127.0.0.1:6379/1")
# The suite runs against the real services only: a green run on SQLite or without Redis proves less.
if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
    raise ImproperlyConfigured("TEST_DATABASE_URL must name a PostgreSQL database (the tests never use SQLite).")
database_server_side_binding(DATABASES["default"])  # noqa: F405 - as production binds and prepares
if not TEST_REDIS_URL.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured("TEST_REDIS_URL must name a Redis server, e.g. redis://127.0.0.1:6379/1.")
REDIS_URL = TEST_REDIS_URL
CACHES = {
    "default": {
        "BACKEND": "common.cache.FailOpenRedisCache",
        "LOCATION": TEST_REDIS_URL,
        "KEY_PREFIX": "contexto-test",
        "OPTIONS": CACHE_OPTIONS,  # noqa: F405
    }
}
# Tests enqueue eagerly unless they start a real worker (see tests that use celery_worker).
CELERY_BROKER_URL = TEST_REDIS_URL
CELERY_TASK_ALWAYS_EAGER = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"user": "100000/min"}}  # noqa: F405
LLM_PROVIDER = "offline"
LLM_BASE_URL = ""
KNOWLEDGE_CATALOG_DIRS = [BASE_DIR / "knowledge" / "catalog"]  # noqa: F405
# A scripted model server in a test answers the turn, not a package save's search-terms request;
# tests/knowledge/router/test_search_terms.py turns it on where it is the subject.
KNOWLEDGE_SEARCH_TERMS_ON_SAVE = False
# Tasks run eagerly here: embedding every package a test saves would slow the suite and give the
# router a signal most tests are not about; the dense tests switch it on (tests/knowledge/router/test_dense.py).
KNOWLEDGE_EMBED_ON_SAVE = False
# Each test process keeps its router index in memory and builds in the request's
# thread (deterministic); tests of the shared segments and background builds set these.
# (a test starting other processes passes its directory through the environment).
KNOWLEDGE_INDEX_DIR = Path(os.environ["KNOWLEDGE_INDEX_DIR"]) if os.environ.get("KNOWLEDGE_INDEX_DIR") else None
KNOWLEDGE_INDEX_BACKGROUND = False
KNOWLEDGE_INDEX_COMPACT_WAIT = 0  # no worker writes compactions here (the tests of it set it)
