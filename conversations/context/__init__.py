"""The UI context engine (PRD-002): pure functions, no database.

validation (schema, size, age) → redaction → snapshot (hash) → resolver
(references, clarifications, intent proposals, rewrite) → prompt (minimized).
The Django side (services, models, APIs) lives in ``conversations.context_*``
modules and calls these; see docs/context-engine.md.
"""

from .canonical import canonical_json, sha256_hex
from .errors import (
    ContextError,
    ContextForbidden,
    ContextFromFuture,
    ContextSizeLimitExceeded,
    ContextValidationError,
    StaleContextAge,
    StaleContextVersion,
    UnknownBaseContext,
)
from .merge_patch import apply_merge_patch
from .prompt import build_prompt_context, semantic_context
from .redaction import MASK, redact_context
from .resolver import Resolution, SemanticInfo, resolve
from .schema import AGENT_CONTEXT_SCHEMA, validate_context_schema
from .validation import ValidatedContext, check_delta_payload, is_delta_payload, validate_context

__all__ = [
    "AGENT_CONTEXT_SCHEMA",
    "MASK",
    "ContextError",
    "ContextForbidden",
    "ContextFromFuture",
    "ContextSizeLimitExceeded",
    "ContextValidationError",
    "Resolution",
    "SemanticInfo",
    "StaleContextAge",
    "StaleContextVersion",
    "UnknownBaseContext",
    "ValidatedContext",
    "apply_merge_patch",
    "build_prompt_context",
    "canonical_json",
    "check_delta_payload",
    "is_delta_payload",
    "redact_context",
    "resolve",
    "semantic_context",
    "sha256_hex",
    "validate_context",
    "validate_context_schema",
]
