"""A Redis cache that fails open: when Redis is unreachable, this process uses local memory.

DRF's throttle counters, the router's query cache and fetch feedback all live in
the default cache. With a plain RedisCache one Redis outage made every
authenticated endpoint answer 500. Here a Redis error opens a short circuit:
for ``retry_seconds`` this process serves the cache from its own local memory
(throttling becomes per process, cached routes are recomputed, feedback
versions are local), logs one line when it opens and one when Redis is back,
and then tries Redis again. Socket timeouts bound every call, so a hung Redis
costs one request at most ``socket_timeout`` per window, not a worker.
"""

import logging
import threading
import time

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.connection import ConnectionProxy
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

_STATE_LOCK = threading.Lock()
# Per process, per LOCATION: monotonic time until which Redis is skipped.
_open_until: dict[str, float] = {}
_fallbacks: dict[str, LocMemCache] = {}

_GUARDED = (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
)


class ReusedClientRedisCacheClient(RedisCacheClient):
    """Django wraps its connection pool in a new ``redis.Redis`` on every cache call, and building
    one sets up its ~170 response callbacks (about 0.1 ms, six times in an agent turn). One client
    per pool, reused: a ``redis.Redis`` is safe to share between threads (each command takes its
    own connection from the pool)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients.setdefault(pool, self._client(connection_pool=pool))
        return client


class FailOpenRedisCache(RedisCache):
    def __init__(self, server, params):
        params = dict(params)
        options = dict(params.get("OPTIONS") or {})
        self.retry_seconds = float(options.pop("retry_seconds", 5.0))
        options.setdefault("socket_connect_timeout", 0.5)
        options.setdefault("socket_timeout", 1.0)
        params["OPTIONS"] = options
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
        self._location = server if isinstance(server, str) else ",".join(server)
        with _STATE_LOCK:
            if self._location not in _fallbacks:
                _fallbacks[self._location] = LocMemCache(
                    f"fail-open:{self._location}", {"OPTIONS": {"MAX_ENTRIES": 10_000}}
                )
        self._fallback = _fallbacks[self._location]
        # The fallback must build keys exactly as this cache does (prefix, version).
        self._fallback.key_prefix = self.key_prefix
        self._fallback.version = self.version
        self._fallback.key_func = self.key_func

    @property
    def redis_available(self) -> bool:
        return _open_until.get(self._location, 0.0) <= time.monotonic()

    def _call(self, name, *args, **kwargs):
        if self.redis_available:
            try:
                result = getattr(super(), name)(*args, **kwargs)
            except RedisError as exc:
                self._open(exc)
            else:
                if self._location in _open_until:
                    with _STATE_LOCK:
                        if _open_until.pop(self._location, None) is not None:
                            logger.warning("cache.redis_recovered")
                return result
        return getattr(self._fallback, name)(*args, **kwargs)

    def _open(self, exc: Exception) -> None:
        with _STATE_LOCK:
            first = self._location not in _open_until
            _open_until[self._location] = time.monotonic() + self.retry_seconds
        if first:
            logger.warning(
                "cache.redis_unavailable error=%s fallback=local retry_s=%.1f",
                type(exc).__name__,
                self.retry_seconds,
            )

    def incr_window(self, key: str, previous_key: str, timeout: int) -> tuple[int, int]:
        """Add one to ``key`` (created with ``timeout``) and read ``previous_key``: one round trip
        (common.throttling). Stored as plain integers, which ``get`` reads back."""
        if self.redis_available:
            try:
                current_key, before_key = self.make_and_validate_key(key), self.make_and_validate_key(previous_key)
                pipe = self._cache.get_client(current_key, write=True).pipeline(transaction=False)
                pipe.incr(current_key)
                pipe.expire(current_key, timeout)
                pipe.get(before_key)
                current, _, previous = pipe.execute()
            except RedisError as exc:
                self._open(exc)
            else:
                return int(current), int(previous or 0)
        from common.throttling import window_counts

        return window_counts(self._fallback, key, previous_key, timeout)

    def list_append(self, key: str, value: str, *, keep: int, timeout: int) -> None:
        """Append ``value`` to the list at ``key``, keep its last ``keep`` items and restart its expiry:
        one round trip, atomic (MULTI/EXEC), so two processes appending at once both land."""
        if self.redis_available:
            try:
                made = self.make_and_validate_key(key)
                pipe = self._cache.get_client(made, write=True).pipeline(transaction=True)
                pipe.rpush(made, value)
                pipe.ltrim(made, -keep, -1)
                pipe.expire(made, timeout)
                pipe.execute()
            except RedisError as exc:
                self._open(exc)
            else:
                return
        local_list_append(self._fallback, key, value, keep=keep, timeout=timeout)

    def list_items(self, key: str) -> list[str]:
        """The list ``list_append`` keeps at ``key``, oldest first (empty when there is none)."""
        if self.redis_available:
            try:
                made = self.make_and_validate_key(key)
                items = self._cache.get_client(made).lrange(made, 0, -1)
            except RedisError as exc:
                self._open(exc)
            else:
                return [item.decode() for item in items]
        return self._fallback.get(key) or []

    def ping(self) -> None:
        """Raise unless Redis answers now (readiness probe; ignores the circuit)."""
        self._cache.get_client(write=False).ping()


# A local-memory cache lives in this process only: a lock here makes its read-modify-write atomic.
_LOCAL_LIST_LOCK = threading.Lock()


def local_list_append(cache, key: str, value: str, *, keep: int, timeout: int) -> None:
    """``FailOpenRedisCache.list_append`` for a cache of this process (local memory, the fallback)."""
    with _LOCAL_LIST_LOCK:
        items = [*(cache.get(key) or []), value][-keep:]
        cache.set(key, items, timeout=timeout)


def _backend(cache):
    # django.core.cache.cache is a proxy to this thread's default cache: the backend behind it.
    return cache._connections[cache._alias] if isinstance(cache, ConnectionProxy) else cache


def list_append(cache, key: str, value: str, *, keep: int, timeout: int) -> None:
    """Append to a bounded list in ``cache`` without losing a concurrent append: Redis's own list
    (``FailOpenRedisCache.list_append``) or, for local memory, under this process's lock. Any other
    backend (none is configured today) gets the same get-then-set under this process's lock: atomic
    within the process only, so two processes appending at once may keep one of the two; a
    remembered route is a hint for fetch feedback, not data, and a request must not fail for it."""
    backend = _backend(cache)
    if isinstance(backend, FailOpenRedisCache):
        backend.list_append(key, value, keep=keep, timeout=timeout)
    else:
        local_list_append(backend, key, value, keep=keep, timeout=timeout)


def list_items(cache, key: str) -> list[str]:
    """The list ``list_append`` keeps at ``key``, oldest first."""
    backend = _backend(cache)
    if isinstance(backend, FailOpenRedisCache):
        return backend.list_items(key)
    return backend.get(key) or []


def _guarded(name):
    def method(self, *args, **kwargs):
        return self._call(name, *args, **kwargs)

    method.__name__ = name
    return method


for _name in _GUARDED:
    setattr(FailOpenRedisCache, _name, _guarded(_name))


def reset_circuits() -> None:
    """Forget open circuits and local fallbacks (tests)."""
    with _STATE_LOCK:
        _open_until.clear()
        for fallback in _fallbacks.values():
            fallback.clear()
