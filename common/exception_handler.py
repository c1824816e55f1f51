"""One JSON error shape for every API endpoint (DESIGN.md, "Errors")."""

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from common.exceptions import ApplicationError

logger = logging.getLogger(__name__)

_DRF_CODES: dict[type, str] = {
    exceptions.ParseError: "MALFORMED_REQUEST",
    exceptions.AuthenticationFailed: "AUTHENTICATION_FAILED",
    exceptions.NotAuthenticated: "NOT_AUTHENTICATED",
    exceptions.PermissionDenied: "PERMISSION_DENIED",
    exceptions.NotFound: "NOT_FOUND",
    exceptions.MethodNotAllowed: "METHOD_NOT_ALLOWED",
    exceptions.NotAcceptable: "NOT_ACCEPTABLE",
    exceptions.UnsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE",
    exceptions.Throttled: "THROTTLED",
    exceptions.ValidationError: "VALIDATION_ERROR",
}


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _message_from_detail(detail: Any) -> str:
    if isinstance(detail, (list, tuple)) and detail:
        return _message_from_detail(detail[0])
    if isinstance(detail, dict) and detail:
        key, value = next(iter(detail.items()))
        return f"{key}: {_message_from_detail(value)}"
    return str(detail)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, (OperationalError, InterfaceError)):
        # A dropped or refused connection: DatabaseRetryMiddleware retries idempotent requests.
        from common.db_resilience import DatabaseUnavailableError, mark_unavailable

        error = DatabaseUnavailableError()
        logger.warning("api.database_unavailable error=%s", type(exc).__name__)
        return mark_unavailable(Response(error_body(error.code, error.message), status=error.status_code))
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("REQUEST_TOO_LARGE", "The request body is too large."),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, DjangoValidationError):
        details = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        exc = exceptions.ValidationError(details)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        view = context.get("view")
        logger.exception("api.unhandled_error view=%s", type(view).__name__ if view else None)
        return Response(
            error_body("INTERNAL_ERROR", "An unexpected error occurred."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )

    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "ERROR")
    if isinstance(exc, exceptions.ValidationError):
        details = {"fields": exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}}
        message = "Invalid input: " + _message_from_detail(exc.detail)
    else:
        details = {}
        message = _message_from_detail(getattr(exc, "detail", str(exc)))
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            details = {"retry_after_seconds": int(exc.wait)}
    response.data = error_body(code, message, details)
    return response
