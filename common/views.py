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


@csrf_exempt  # changes nothing; without it a token client's DELETE/POST got Django's HTML CSRF 403
def api_not_found(request, *args, **kwargs):
    """Unknown /api/ paths answer JSON even with DEBUG on."""
    return JsonResponse(error_body("NOT_FOUND", "No API endpoint at this path."), status=404)


def home(request):
    """`/`: what this is and where to go; the metrics link only for staff (it can be private)."""
    from django.conf import settings
    from django.shortcuts import render

    return render(
        request,
        "home.html",
        {
            "demo_enabled": settings.DEMO_ENABLED,
            "show_metrics": request.user.is_authenticated and request.user.is_staff,
            "mcp_url": request.build_absolute_uri("/mcp/"),
        },
    )
