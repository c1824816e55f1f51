from rest_framework.permissions import BasePermission

from accounts.exceptions import NoTenantError
from accounts.selectors import tenant_for_user


class HasTenant(BasePermission):
    """Resolve the caller's tenant once and expose it as request.tenant."""

    def has_permission(self, request, view) -> bool:
        tenant = tenant_for_user(request.user)
        if tenant is None:
            if not request.user or not request.user.is_authenticated:
                return False  # IsAuthenticated already answers 401
            raise NoTenantError()
        request.tenant = tenant
        return True
