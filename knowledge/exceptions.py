from common.exceptions import ApplicationError, NotFoundError


class PackageNotFoundError(NotFoundError):
    code = "PACKAGE_NOT_FOUND"
    message = "No active package has this ID or alias."


class PackageImportError(ApplicationError):
    """Raised with every problem found; nothing was written."""

    code = "PACKAGE_IMPORT_INVALID"
    status_code = 400

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors), details={"errors": errors})


class RevisionNotFoundError(NotFoundError):
    code = "REVISION_NOT_FOUND"
    message = "This package has no such revision."


class InvalidPackageOperationError(ApplicationError):
    code = "INVALID_PACKAGE_OPERATION"
    status_code = 409
