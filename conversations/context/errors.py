"""Context-engine errors: stable codes and HTTP statuses (docs/context-engine.md)."""

from __future__ import annotations

from common.exceptions import ApplicationError


class ContextError(ApplicationError):
    """Base of the context engine's errors; ``common.exceptions`` is plain Python."""

    code = "INVALID_CONTEXT"
    status_code = 400
    message = "The UI context is invalid."


class ContextValidationError(ContextError):
    code = "INVALID_CONTEXT"
    status_code = 400

    def __init__(self, errors: list[dict[str, str]]):
        first = errors[0] if errors else {"field": "(root)", "message": "invalid"}
        super().__init__(
            f"Context field '{first['field']}' {first['message']}.",
            details={"errors": errors},
        )
        self.errors = errors


class ContextSizeLimitExceeded(ContextError):
    code = "CONTEXT_SIZE_LIMIT_EXCEEDED"
    status_code = 413
    message = "The UI context exceeds the size limit."


class StaleContextAge(ContextError):
    code = "STALE_CONTEXT_AGE"
    status_code = 409
    message = "The UI context is older than its time-to-live; capture it again."


class ContextFromFuture(ContextError):
    code = "CONTEXT_TIMESTAMP_IN_FUTURE"
    status_code = 400
    message = "The UI context capture time is too far in the future."


class StaleContextVersion(ContextError):
    code = "STALE_CONTEXT_VERSION"
    status_code = 409
    message = "The UI context version is older than the last one this session received."


class UnknownBaseContext(ContextError):
    code = "UNKNOWN_BASE_CONTEXT"
    status_code = 409
    message = "The base context snapshot is unknown for this session; send the whole context."


class ContextForbidden(ContextError):
    code = "CONTEXT_FORBIDDEN"
    status_code = 403
    message = "The UI context refers to an entity you cannot access."
