"""API token authentication that loads the caller's tenant in the same query.

DRF's ``TokenAuthentication`` reads the token with its user; every API request
then asked for the user's membership and its tenant (``HasTenant``), two more
round trips per request. Here the one token query joins them
(``user.membership.tenant`` is then cached on the user).

The statement is written once per process from the models' fields, not compiled by the
ORM on every request (every API request runs it; the ORM spent about a millisecond of CPU
building a four-table ``select_related`` each time). The rows become model instances with
the same related-object caches ``select_related`` would have set.
"""

from functools import lru_cache

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts.models import Membership, Tenant
from common.raw_select import columns, row_instances


@lru_cache(maxsize=4)
def _token_query(token_model) -> tuple[str, list]:
    user_model = get_user_model()
    models = [token_model, user_model, Membership, Tenant]
    token, user, membership, tenant = (model._meta.db_table for model in models)
    user_fk = token_model._meta.get_field("user").column
    user_pk = user_model._meta.pk.column
    sql = (
        f"SELECT {', '.join(columns(model)[1] for model in models)} "
        f'FROM "{token}" INNER JOIN "{user}" ON ("{token}"."{user_fk}" = "{user}"."{user_pk}") '
        f'LEFT OUTER JOIN "{membership}" ON ("{user}"."{user_pk}" = "{membership}"."user_id") '
        f'LEFT OUTER JOIN "{tenant}" ON ("{membership}"."tenant_id" = "{tenant}"."id") '
        f'WHERE "{token}"."{token_model._meta.pk.column}" = %s'
    )
    return sql, models


def token_with_tenant(token_model, key: str):
    """The token with its user, the user's membership (or none) and its tenant; None if unknown."""
    sql, models = _token_query(token_model)
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, [key])
        row = cursor.fetchone()
    if row is None:
        return None
    token, user, membership, tenant = row_instances(row, models)
    token_model._meta.get_field("user").set_cached_value(token, user)
    # user.membership: the reverse one-to-one (None cached means "has none", as select_related leaves it)
    Membership._meta.get_field("user").remote_field.set_cached_value(user, membership)
    if membership is not None:
        Membership._meta.get_field("user").set_cached_value(membership, user)
        Membership._meta.get_field("tenant").set_cached_value(membership, tenant)
    return token


class TenantTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        if "\x00" in key:  # no token holds a NUL, and PostgreSQL refuses one in a query (a 500)
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token = token_with_tenant(self.get_model(), key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return (token.user, token)
