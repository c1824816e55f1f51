from common.exceptions import ApplicationError, ConflictError, NotFoundError


class SessionNotFoundError(NotFoundError):
    code = "SESSION_NOT_FOUND"
    message = "Session not found."


class SessionNotOpenError(ConflictError):
    code = "SESSION_NOT_OPEN"
    message = "This session is not open: it was handed off to a person or closed."


class InvalidSessionTransitionError(ConflictError):
    code = "INVALID_SESSION_TRANSITION"
    message = "The session cannot move to that status."


class AgentNotFoundError(ApplicationError):
    code = "AGENT_NOT_FOUND"
    status_code = 400
    message = "No active agent with this slug."


class NoDefaultAgentError(ConflictError):
    code = "NO_DEFAULT_AGENT"
    message = "No agent was named and no active default agent is configured."


class InvalidIdempotencyKeyError(ApplicationError):
    code = "INVALID_IDEMPOTENCY_KEY"
    status_code = 400
    message = "The Idempotency-Key header must be 1 to 200 visible ASCII characters."


class IdempotencyKeyReusedError(ApplicationError):
    code = "IDEMPOTENCY_KEY_REUSED"
    status_code = 422
    message = "This Idempotency-Key was already used with a different request body."


class IdempotentRequestInProgressError(ConflictError):
    code = "IDEMPOTENT_REQUEST_IN_PROGRESS"
    message = "A request with this Idempotency-Key is still being processed; retry shortly."


class MessageNotFoundError(NotFoundError):
    code = "MESSAGE_NOT_FOUND"
    message = "Message not found in this session."


class MessageNotRatableError(ApplicationError):
    code = "MESSAGE_NOT_RATABLE"
    message = "Only the agent's replies can be rated."
