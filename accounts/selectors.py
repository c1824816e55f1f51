from accounts.models import Tenant


def tenant_for_user(user) -> Tenant | None:
    """The active tenant a user acts for, or None."""
    if not user or not user.is_authenticated:
        return None
    membership = getattr(user, "membership", None)
    if membership is None or not membership.tenant.is_active:
        return None
    return membership.tenant
