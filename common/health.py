"""Liveness and readiness probes for load balancers and orchestrators."""

import logging
import time

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET
from kombu import Connection

logger = logging.getLogger(__name__)


@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_broker() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER and not settings.CELERY_BROKER_URL:
        return "eager"
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return "ok"


@require_GET
def readyz(request):
    checks: dict[str, str] = {}
    failed: list[str] = []
    for name, check in (("database", _check_database), ("broker", _check_broker)):
        started = time.monotonic()
        try:
            checks[name] = check() or "ok"
        except Exception as exc:  # noqa: BLE001 - a probe reports any failure, it never raises
            checks[name] = "unavailable"
            failed.append(name)
            logger.warning(
                "readyz.check_failed check=%s error=%s duration_ms=%.1f",
                name,
                type(exc).__name__,
                (time.monotonic() - started) * 1000,
            )
    if failed:
        return JsonResponse(
            {
                "status": "unavailable",
                "checks": checks,
                "error": {
                    "code": "DEPENDENCY_UNAVAILABLE",
                    "message": f"Unavailable: {', '.join(failed)}.",
                    "details": {"failed": failed},
                },
            },
            status=503,
        )
    return JsonResponse({"status": "ok", "checks": checks})
