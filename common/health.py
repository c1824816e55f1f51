"""Liveness and readiness probes for load balancers and orchestrators.

/healthz touches nothing. /readyz checks the database, the cache and the broker
concurrently, each with its own short timeout, on a small dedicated thread pool:
a hung dependency makes the probe answer "timeout" after READYZ_TIMEOUT_SECONDS,
it never holds the request (or the server thread serving it) longer.

Only the database makes the process unready (503): without it nothing works.
Cache and broker failures answer 200 with status "degraded": the API keeps
serving (the cache falls back to local memory, results wait for the sweep), and
taking every web process out of rotation because Redis is down would turn a
partial outage into a full one.
"""

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import redis
from django.conf import settings
from django.core.cache import caches
from django.db import connections, transaction
from django.http import JsonResponse
from django.views.decorators.http import require_GET
from kombu import Connection

logger = logging.getLogger(__name__)

# Bounded: stuck checks occupy at most these threads; later probes then report "timeout".
_POOL = ThreadPoolExecutor(max_workers=6, thread_name_prefix="readyz")
CRITICAL = ("database",)


def _timeout() -> float:
    return float(getattr(settings, "READYZ_TIMEOUT_SECONDS", 2.0))


@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


def _check_database() -> str:
    # Runs on a pool thread: its own connection, closed afterwards. The server
    # enforces the timeout too, so a query stuck on a lock cannot outlive it.
    # The timeout is local to the probe's transaction: close() gives a pooled connection back to
    # the pool, and a session-level timeout would stay on it for whatever request takes it next.
    connection = connections["default"]
    try:
        with transaction.atomic(using="default"), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                # set_config, not SET: a bound parameter (server-side binding) cannot stand in SET.
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [str(int(_timeout() * 1000))])
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()
    return "ok"


def _check_cache() -> str:
    cache = caches["default"]
    ping = getattr(cache, "ping", None)
    if ping is None:
        return "local"  # local memory: nothing to reach
    ping()
    return "ok"


def _check_broker() -> str:
    url = settings.CELERY_BROKER_URL
    if settings.CELERY_TASK_ALWAYS_EAGER and not url:
        return "eager"
    timeout = _timeout()
    if url.startswith(("redis://", "rediss://")):
        # A hung Redis accepts the TCP connection and never answers: only a socket timeout notices.
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            client.ping()
        finally:
            client.close()
        return "ok"
    with Connection(url, connect_timeout=timeout, transport_options={"socket_timeout": timeout}) as conn:
        conn.ensure_connection(max_retries=1, timeout=timeout)
    return "ok"


CHECKS = {"database": _check_database, "cache": _check_cache, "broker": _check_broker}


def _run(name: str) -> str:
    # Looked up at call time so tests can replace one check.
    return CHECKS[name]()


@require_GET
def readyz(request):
    started = time.monotonic()
    deadline = started + _timeout() + 0.5
    futures = {name: _POOL.submit(_run, name) for name in CHECKS}
    checks: dict[str, str] = {}
    failed: list[str] = []
    for name, future in futures.items():
        try:
            checks[name] = future.result(timeout=max(0.0, deadline - time.monotonic())) or "ok"
        except FutureTimeout:
            checks[name] = "timeout"
            failed.append(name)
            logger.warning("readyz.check_failed check=%s error=Timeout", name)
        except Exception as exc:  # noqa: BLE001 - a probe reports any failure, it never raises
            checks[name] = "unavailable"
            failed.append(name)
            logger.warning("readyz.check_failed check=%s error=%s", name, type(exc).__name__)
    duration_ms = round((time.monotonic() - started) * 1000, 1)
    critical = [name for name in failed if name in CRITICAL]
    if critical:
        return JsonResponse(
            {
                "status": "unavailable",
                "checks": checks,
                "duration_ms": duration_ms,
                "error": {
                    "code": "DEPENDENCY_UNAVAILABLE",
                    "message": f"Unavailable: {', '.join(failed)}.",
                    "details": {"failed": failed},
                },
            },
            status=503,
        )
    body = {"status": "degraded" if failed else "ok", "checks": checks, "duration_ms": duration_ms}
    if failed:
        body["degraded"] = failed
    return JsonResponse(body)
