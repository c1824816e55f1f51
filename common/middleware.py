from django.conf import settings
from django.http import JsonResponse

from common.exception_handler import error_body
from common.input_guard import InvalidCharactersError, check_query_and_path


class ApiBodySizeLimitMiddleware:
    """Refuse oversize API bodies with 413 before anything reads them."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                return JsonResponse(error_body("MALFORMED_REQUEST", "Invalid Content-Length header."), status=400)
            if length > settings.API_MAX_BODY_BYTES:
                return JsonResponse(
                    error_body(
                        "REQUEST_TOO_LARGE",
                        "The request body is too large.",
                        {"limit_bytes": settings.API_MAX_BODY_BYTES},
                    ),
                    status=413,
                )
        return self.get_response(request)


class HostileInputMiddleware:
    """Refuse NUL characters and lone surrogates in the path and query string with 400.

    Everywhere, admin list filters included: such a value reaching a PostgreSQL
    query raised inside the driver and answered 500.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        found = check_query_and_path(request)
        if found:
            error = InvalidCharactersError(*found)
            return JsonResponse(error_body(error.code, error.message, error.details), status=error.status_code)
        return self.get_response(request)
