from common.exceptions import ApplicationError, ConflictError, NotFoundError


class ResultNotFoundError(NotFoundError):
    code = "RESULT_NOT_FOUND"
    message = "No result with this id."


class ResultConflictError(ConflictError):
    code = "RESULT_ALREADY_EXISTS"
    message = "A different result with this result_id already exists."


class InvalidResultError(ApplicationError):
    code = "INVALID_RESULT"
    status_code = 400
    message = "The result is not valid."


class ExplanationNotRetriableError(ConflictError):
    code = "EXPLANATION_NOT_RETRIABLE"
    message = "Only a result whose provider was unavailable can be explained again."
