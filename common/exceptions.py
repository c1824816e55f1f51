"""The application's domain errors.

Each app's errors subclass ApplicationError with a stable `code`; the API's
exception handler renders every one as {"error": {"code", "message", "details"}}.
"""

from typing import Any


class ApplicationError(Exception):
    code = "APPLICATION_ERROR"
    status_code = 400
    message = "The request could not be processed."

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        status_code: int | None = None,
        details: dict[str, Any] | None = None,
    ):
        self.message = message or self.message
        self.code = code or self.code
        self.status_code = status_code or self.status_code
        self.details = details or {}
        super().__init__(self.message)


class NotFoundError(ApplicationError):
    code = "NOT_FOUND"
    status_code = 404
    message = "Not found."


class ConflictError(ApplicationError):
    code = "CONFLICT"
    status_code = 409
    message = "The request conflicts with the current state."


class DependencyUnavailableError(ApplicationError):
    code = "DEPENDENCY_UNAVAILABLE"
    status_code = 503
    message = "A service this request depends on is unavailable."
