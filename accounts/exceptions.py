from common.exceptions import ApplicationError


class NoTenantError(ApplicationError):
    code = "NO_TENANT"
    status_code = 403
    message = "This account does not belong to an active tenant."


class MembershipConflictError(ApplicationError):
    code = "MEMBERSHIP_CONFLICT"
    status_code = 409
    message = "This user already belongs to another tenant."
