"""The published OpenAPI schema tells the truth: unique names, real envelopes, every status.

- Component names come from the view that nests a serializer
  (``ContextApi.InputSerializer`` → ``ContextInput``): two views' ``InputSerializer``
  no longer collapse into one ``InputRequest`` documenting the wrong body.
- ``paginated(...)`` documents the page envelope the paginator really returns.
- A post-processing hook adds the error responses every operation can give
  (the JSON error shape): 400 for any malformed path/query/body, 401/403 for
  authentication, 404 where the path names something, 413/415 where there is a
  body, 429 throttled, 503 when the database is unavailable.
"""

from functools import cache

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers


class ContextoAutoSchema(AutoSchema):
    def get_serializer_name(self, serializer, direction):
        cls = serializer.__class__
        outer, _, inner = cls.__qualname__.rpartition(".")
        if not outer or "<" in outer:
            return cls.__name__
        prefix = outer.split(".")[-1]
        for suffix in ("Api", "View"):
            if prefix.endswith(suffix):
                prefix = prefix[: -len(suffix)]
        return prefix + inner


@cache
def paginated(serializer_class: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """The page envelope of ``common.pagination.DefaultPagination`` around ``serializer_class``."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
            "Meta": type("Meta", (), {"ref_name": name}),
        },
    )


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object", "additionalProperties": True},
            },
        }
    },
}

_COMMON = {
    "400": "Malformed path, query or body (VALIDATION_ERROR, MALFORMED_REQUEST, JSON_TOO_DEEP, ...)",
    "401": "NOT_AUTHENTICATED / AUTHENTICATION_FAILED",
    "403": "PERMISSION_DENIED",
    "429": "THROTTLED (Retry-After)",
    "503": "DATABASE_UNAVAILABLE or another dependency down (Retry-After)",
}
_WITH_BODY = {
    "413": "REQUEST_TOO_LARGE",
    "415": "UNSUPPORTED_MEDIA_TYPE",
}
_WITH_PATH_PARAMS = {"404": "NOT_FOUND"}


def add_error_responses(result, generator, request, public):
    """drf-spectacular post-processing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = ERROR_SCHEMA
    error_content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            wanted = dict(_COMMON)
            if "requestBody" in operation or method in ("post", "put", "patch"):
                wanted.update(_WITH_BODY)
            if "{" in path:
                wanted.update(_WITH_PATH_PARAMS)
            if any(p.get("name") == "page" for p in operation.get("parameters", [])):
                wanted["404"] = "NOT_FOUND: invalid page"
            for status, description in wanted.items():
                responses.setdefault(status, {"description": description})
            for status, response in responses.items():
                # Every 4xx/5xx answers the error shape, also those documented with a description only.
                if status[0] in "45" and "content" not in response:
                    response["content"] = error_content
    return result


def page_parameters():
    """The paginator's query parameters (an out-of-range page is a 404)."""
    from drf_spectacular.utils import OpenApiParameter

    return [
        OpenApiParameter("page", int, required=False, description="Page number, from 1."),
        OpenApiParameter("page_size", int, required=False, description="Items per page (at most 200)."),
    ]
