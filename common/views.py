"""JSON error pages for API paths; HTML stays Django's for the admin."""

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import page_not_found, server_error

from common.exception_handler import error_body


def handler404(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("NOT_FOUND", "Not found."), status=404)
    return page_not_found(request, exception)


def handler500(request):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("INTERNAL_ERROR", "An unexpected error occurred."), status=500)
    return server_error(request)


# API clients send tokens, not CSRF cookies: a POST to a mistyped path is a JSON 404, not an HTML 403.
@csrf_exempt
def api_not_found(request, *args, **kwargs):
    """Unknown /api/ paths answer JSON even with DEBUG on."""
    return JsonResponse(error_body("NOT_FOUND", "No API endpoint at this path."), status=404)
