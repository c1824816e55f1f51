"""A dropped database connection is a 503 the client may retry, never a 500.

PostgreSQL restarts, failovers, a pooler or an operator terminating backends
leave a worker holding a dead connection: the next query raises
OperationalError/InterfaceError. An idempotent request (GET, HEAD, OPTIONS) is
run once more on a fresh connection; anything else, or a second failure,
answers 503 DATABASE_UNAVAILABLE with Retry-After, so nothing is done twice.
"""

import logging

from django.db import InterfaceError, OperationalError, connections
from django.http import JsonResponse

from common.exceptions import ApplicationError

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DATABASE_ERRORS = (OperationalError, InterfaceError)


class DatabaseUnavailableError(ApplicationError):
    code = "DATABASE_UNAVAILABLE"
    status_code = 503
    message = "The database is unavailable; retry shortly."


def mark_unavailable(response):
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response.database_unavailable = True
    return response


def unavailable_json_response() -> JsonResponse:
    error = DatabaseUnavailableError()
    body = {"error": {"code": error.code, "message": error.message, "details": {}}}
    return mark_unavailable(JsonResponse(body, status=error.status_code))


def _discard_broken_connections() -> None:
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block:
            conn.close()


def _view_is_retry_safe(request) -> bool:
    """A POST that only reads (``database_retry_safe = True`` on the view) may run again too."""
    func = getattr(getattr(request, "resolver_match", None), "func", None)
    return bool(getattr(getattr(func, "view_class", None), "database_retry_safe", False))


class DatabaseRetryMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(response, "database_unavailable", False):
            _discard_broken_connections()
            if request.method in IDEMPOTENT_METHODS or _view_is_retry_safe(request):
                logger.warning("db.unavailable action=retry method=%s", request.method)
                response = self.get_response(request)
                if getattr(response, "database_unavailable", False):
                    _discard_broken_connections()
                    logger.warning("db.unavailable action=answer_503 method=%s", request.method)
            else:
                logger.warning("db.unavailable action=answer_503 method=%s", request.method)
        return response

    def process_exception(self, request, exception):
        # Views outside DRF (admin, health, demo): DRF views go through the exception handler.
        if isinstance(exception, DATABASE_ERRORS):
            return unavailable_json_response()
        return None
