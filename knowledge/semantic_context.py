"""Validation of the UI context the router accepts (a subset of AgentContext).

The router only reads the focus semantic ID, its parents and the page's
semantic ID; the rest of an AgentContext (navigation, selection, user...) is
the UI context engine's business and passes through unread, within the size
limit.
"""

import json

from rest_framework import serializers

from common.exceptions import ApplicationError
from common.identifiers import is_semantic_id
from knowledge.routing_service import SemanticContext

CONTEXT_MAX_BYTES = 5120
MAX_PARENTS = 20


class ContextTooLargeError(ApplicationError):
    code = "CONTEXT_SIZE_LIMIT_EXCEEDED"
    status_code = 413
    message = f"The context is larger than {CONTEXT_MAX_BYTES} bytes."


def _semantic_id(value, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise serializers.ValidationError({field: ["Must be a non-empty string."]})
    value = value.strip()
    if not is_semantic_id(value):
        raise serializers.ValidationError(
            {field: ["Not a semantic ID (dotted identifiers, e.g. workPermit.validity)."]}
        )
    return value


def validate_semantic_context(value) -> SemanticContext | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise serializers.ValidationError("Must be an object.")
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if size > CONTEXT_MAX_BYTES:
        raise ContextTooLargeError(details={"bytes": size, "limit": CONTEXT_MAX_BYTES})

    focus = value.get("focus")
    parents = value.get("parentIds", value.get("parents"))
    if isinstance(focus, dict):
        if "parentIds" in focus:
            parents = focus["parentIds"]
        focus = focus.get("semanticId")
        focus = _semantic_id(focus, "focus.semanticId") if focus is not None else None
    elif focus is not None:
        focus = _semantic_id(focus, "focus")

    if parents is None:
        parents = []
    if not isinstance(parents, list) or len(parents) > MAX_PARENTS:
        raise serializers.ValidationError({"parentIds": [f"Must be a list of at most {MAX_PARENTS} semantic IDs."]})
    parents = [_semantic_id(p, "parentIds") for p in parents]

    page = value.get("page")
    if isinstance(page, dict):
        page = page.get("semanticId") or page.get("id")
        page = _semantic_id(page, "page.semanticId") if page is not None else None
    elif page is not None:
        page = _semantic_id(page, "page")
    return SemanticContext(focus=focus, parents=tuple(parents), page=page)
