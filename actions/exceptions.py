from common.exceptions import ApplicationError, ConflictError, NotFoundError


class ActionNotFoundError(NotFoundError):
    code = "ACTION_NOT_FOUND"
    message = "Action not found."


class ActionForbiddenError(ApplicationError):
    code = "ACTION_FORBIDDEN"
    status_code = 403
    message = "Only the user who asked for this action may confirm it or report on it."


class ActionDeniedError(ApplicationError):
    code = "ACTION_DENIED"
    status_code = 403
    message = "The action is not allowed."


class ConfirmationInvalidError(ApplicationError):
    code = "ACTION_CONFIRMATION_INVALID"
    status_code = 403
    message = "The confirmation token does not belong to this preview."


class PreviewExpiredError(ConflictError):
    code = "ACTION_PREVIEW_EXPIRED"
    message = "The preview expired; ask again to get a new one."


class ActionNotAwaitingConfirmationError(ConflictError):
    code = "ACTION_NOT_AWAITING_CONFIRMATION"
    message = "This action is not waiting for a confirmation (already confirmed, denied or finished)."


class ActionNotAwaitingReportError(ConflictError):
    code = "ACTION_NOT_AWAITING_REPORT"
    message = "This action is not waiting for the front end's report."


class ActionNotRetryableError(ConflictError):
    code = "ACTION_NOT_RETRYABLE"
    message = "Only a failed webhook action can be retried."


class CapabilityFileError(ValueError):
    """A capability file that cannot be imported (nothing was written)."""
