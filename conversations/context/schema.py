"""The AgentContext wire contract (seed PRD-002 §5–§30) as a JSON Schema.

The schema is the single source of truth: the API serves it at
``/api/v1/context-schema``, the validator below enforces it and the
front-end library is written against it. Every object is closed
(``additionalProperties: false``) so a typo or a smuggled DOM dump is a 400
naming the field, not silently ignored data.
"""

from __future__ import annotations

from typing import Any

import fastjsonschema
from jsonschema import Draft202012Validator

from common.identifiers import SEMANTIC_ID_MAX_LENGTH, SEMANTIC_ID_PATTERN

from .errors import ContextValidationError

SCHEMA_ID = "https://contexto.local/schemas/agent-context.json"


ELEMENT_TYPES = (
    "page",
    "section",
    "tab",
    "component",
    "field",
    "button",
    "table",
    "row",
    "cell",
    "menu",
)
VISIBILITY_STATES = ("visible", "hidden", "collapsed", "inactive", "disabled")
ENVIRONMENTS = ("production", "staging", "development")

_SHORT = {"type": "string", "minLength": 1, "maxLength": 200}
_LABEL = {"type": "string", "maxLength": 200}
_SEMANTIC_ID = {"type": "string", "maxLength": SEMANTIC_ID_MAX_LENGTH, "pattern": SEMANTIC_ID_PATTERN}
_SEMANTIC_IDS = {"type": "array", "items": {"$ref": "#/$defs/semanticId"}, "maxItems": 20}
_SCALAR = {"type": ["string", "number", "boolean", "null"]}
_TIMESTAMP = {"type": "string", "minLength": 10, "maxLength": 40}

AGENT_CONTEXT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_ID,
    "title": "AgentContext",
    "description": (
        "Compact semantic model of what the user sees in the front end, sent with "
        "each message (PRD-002). No DOM, no HTML, no whole records. camelCase. "
        "Canonical UTF-8 JSON must not exceed 5,120 bytes."
    ),
    "type": "object",
    "additionalProperties": False,
    "required": ["application", "navigation", "page", "user", "contextVersion"],
    # The seed names the capture time ``timestamp`` (§5) and ``capturedAt`` (§39);
    # either is accepted, ``capturedAt`` wins when both are sent.
    "anyOf": [{"required": ["capturedAt"]}, {"required": ["timestamp"]}],
    "properties": {
        "application": {
            "type": "object",
            "additionalProperties": False,
            "required": ["applicationId"],
            "properties": {
                "applicationId": _SHORT,
                "applicationVersion": {"type": "string", "maxLength": 50},
                "environment": {"enum": list(ENVIRONMENTS)},
            },
        },
        "navigation": {
            "type": "object",
            "additionalProperties": False,
            "required": ["route"],
            "properties": {
                "route": {"type": "string", "minLength": 1, "maxLength": 500},
                "routeName": {"type": "string", "maxLength": 200},
                "params": {
                    "type": "object",
                    "maxProperties": 20,
                    "propertyNames": {"maxLength": 100},
                    "additionalProperties": {"type": "string", "maxLength": 200},
                },
                "breadcrumbs": {
                    "type": "array",
                    "maxItems": 10,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["label"],
                        "properties": {
                            "label": _LABEL,
                            "route": {"type": "string", "maxLength": 500},
                            "semanticId": {"$ref": "#/$defs/semanticId"},
                        },
                    },
                },
                "history": {
                    "type": "array",
                    "maxItems": 10,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["route"],
                        "properties": {
                            "route": {"type": "string", "maxLength": 500},
                            "routeName": {"type": "string", "maxLength": 200},
                            "at": _TIMESTAMP,
                        },
                    },
                },
            },
        },
        "page": {
            "type": "object",
            "additionalProperties": False,
            "required": ["id", "type", "title"],
            "properties": {
                "id": _SHORT,
                "type": {"type": "string", "minLength": 1, "maxLength": 100},
                "title": _SHORT,
                "semanticId": {"$ref": "#/$defs/semanticId"},
                "metadata": {"type": "object", "maxProperties": 20},
            },
        },
        "tabs": {
            "type": "array",
            "maxItems": 30,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "title"],
                "properties": {
                    "id": _SHORT,
                    "title": _SHORT,
                    "index": {"type": "integer", "minimum": 0},
                    "active": {"type": "boolean"},
                    "semanticId": {"$ref": "#/$defs/semanticId"},
                    "visibility": {"$ref": "#/$defs/visibility"},
                },
            },
        },
        "activeTabId": _SHORT,
        "focus": {
            "type": "object",
            "additionalProperties": False,
            "required": ["semanticId", "type"],
            "properties": {
                "semanticId": {"$ref": "#/$defs/semanticId"},
                "type": {"$ref": "#/$defs/elementType"},
                "label": _LABEL,
                "parentIds": _SEMANTIC_IDS,
                "value": _SCALAR,
                "visibility": {"$ref": "#/$defs/visibility"},
            },
        },
        "selection": {
            "type": "object",
            "additionalProperties": False,
            "required": ["entityType", "entityId"],
            "properties": {
                "entityType": {"type": "string", "minLength": 1, "maxLength": 100},
                "entityId": {"type": "string", "minLength": 1, "maxLength": 200},
                "displayName": _LABEL,
                # Accepted for compatibility with the seed (§24) but never forwarded
                # wholesale to the model; stored redacted.
                "fields": {"type": "object", "maxProperties": 50},
            },
        },
        "viewport": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "scrollContainer": {"type": "string", "maxLength": 200},
                "visibleSemanticIds": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/semanticId"},
                    "maxItems": 100,
                },
                "topVisibleElement": {"$ref": "#/$defs/semanticId"},
                "bottomVisibleElement": {"$ref": "#/$defs/semanticId"},
            },
        },
        # Elements the UI knows about beyond the focus: their label and visibility
        # let the resolver offer choices and skip hidden/collapsed/inactive/disabled ones.
        "elements": {
            "type": "array",
            "maxItems": 60,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["semanticId"],
                "properties": {
                    "semanticId": {"$ref": "#/$defs/semanticId"},
                    "type": {"$ref": "#/$defs/elementType"},
                    "label": _LABEL,
                    "parentIds": _SEMANTIC_IDS,
                    "visibility": {"$ref": "#/$defs/visibility"},
                },
            },
        },
        "user": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                # Informational only: the server trusts the authenticated caller.
                "userId": {"type": "string", "maxLength": 200},
                "locale": {"type": "string", "maxLength": 20},
                "timezone": {"type": "string", "maxLength": 64},
                "roles": {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 20},
            },
        },
        "capturedAt": _TIMESTAMP,
        "timestamp": _TIMESTAMP,
        # The snapshot stores it in a 32-bit integer column; a larger one would be a 500.
        "contextVersion": {"type": "integer", "minimum": 0, "maximum": 2147483647},
    },
    "$defs": {
        "semanticId": _SEMANTIC_ID,
        "elementType": {"enum": list(ELEMENT_TYPES)},
        "visibility": {"enum": list(VISIBILITY_STATES)},
    },
}

Draft202012Validator.check_schema(AGENT_CONTEXT_SCHEMA)
_VALIDATOR = Draft202012Validator(AGENT_CONTEXT_SCHEMA)


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline_refs(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items() if k not in ("$defs", "$schema", "$id")}
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    return node


# Hot path: the same schema compiled to Python code (draft-07 subset, refs inlined) is
# ~25x faster than the interpreter above, which only runs to *explain* a rejection.
# If the two ever disagree on a context, the reference validator's verdict wins.
_FAST_IS_VALID = fastjsonschema.compile(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        **_inline_refs(AGENT_CONTEXT_SCHEMA, AGENT_CONTEXT_SCHEMA["$defs"]),
    }
)

MAX_REPORTED_ERRORS = 10


def _field_path(path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _describe(error) -> dict[str, str]:
    """One error as ``{"field", "message"}`` with the field the client must fix."""
    field = _field_path(error.absolute_path)
    validator = error.validator
    if validator == "additionalProperties":
        known = error.schema.get("properties", {})
        unexpected = sorted(k for k in error.instance if k not in known)
        name = unexpected[0] if unexpected else "?"
        return {
            "field": f"{field}.{name}" if field else name,
            "message": "unknown field",
        }
    if validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        return {"field": f"{field}.{missing}" if field else missing, "message": "is required"}
    if validator == "anyOf" and not field:
        return {"field": "capturedAt", "message": "is required (or 'timestamp')"}
    if validator == "enum":
        return {"field": field, "message": f"must be one of {', '.join(map(str, error.validator_value))}"}
    if validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return {"field": field, "message": f"must be of type {expected}"}
    if validator == "pattern":
        return {"field": field, "message": "is not a valid semantic id (dotted segments)"}
    if validator in ("maxLength", "minLength", "maxItems", "maxProperties", "minimum", "maximum"):
        return {"field": field, "message": f"violates {validator} {error.validator_value}"}
    return {"field": field or "(root)", "message": error.message[:200]}


def validate_context_schema(context: Any) -> None:
    """Raise :class:`ContextValidationError` naming each offending field."""
    try:
        _FAST_IS_VALID(context)
        return
    except fastjsonschema.JsonSchemaException:
        pass
    errors = sorted(
        _VALIDATOR.iter_errors(context),
        key=lambda e: (list(map(str, e.absolute_path)), e.validator),
    )
    described = []
    seen = set()
    for error in errors:
        item = _describe(error)
        key = (item["field"], item["message"])
        if key in seen:
            continue
        seen.add(key)
        described.append(item)
        if len(described) >= MAX_REPORTED_ERRORS:
            break
    if described:
        raise ContextValidationError(described)
