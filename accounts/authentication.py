"""API token authentication that loads the caller's tenant in the same query.

DRF's ``TokenAuthentication`` reads the token with its user; every API request
then asked for the user's membership and its tenant (``HasTenant``), two more
round trips per request. Here the one token query joins them
(``user.membership.tenant`` is then cached on the user).
"""

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication


class TenantTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        model = self.get_model()
        try:
            token = model.objects.select_related("user", "user__membership__tenant").get(key=key)
        except model.DoesNotExist:
            raise exceptions.AuthenticationFailed(_("Invalid token.")) from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return (token.user, token)
