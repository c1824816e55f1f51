from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.exceptions import MembershipConflictError
from accounts.models import Membership, Tenant


@transaction.atomic
def tenant_get_or_create(*, slug: str, name: str | None = None) -> Tenant:
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        tenant = Tenant(slug=slug, name=name or slug)
        tenant.full_clean()
        tenant.save()
    return tenant


@transaction.atomic
def membership_ensure(*, user, tenant: Tenant, role: str | None = None) -> Membership:
    """The user's membership of the tenant; ``role`` (when given) is set, else kept (new: member)."""
    membership = Membership.objects.select_for_update().filter(user=user).first()
    if membership is not None:
        if membership.tenant_id != tenant.id:
            raise MembershipConflictError(details={"tenant": membership.tenant.slug})
        if role and membership.role != role:
            membership.role = role
            membership.full_clean()
            membership.save(update_fields=["role"])
        return membership
    role = role or Membership.Role.MEMBER
    membership = Membership(user=user, tenant=tenant, role=role)
    membership.full_clean()
    membership.save()
    return membership


@transaction.atomic
def api_token_create(*, user, tenant: Tenant, rotate: bool = False, role: str | None = None) -> Token:
    """Ensure the user is a member of the tenant (with ``role`` when given) and return its API token."""
    membership_ensure(user=user, tenant=tenant, role=role)
    if rotate:
        Token.objects.filter(user=user).delete()
    token, _ = Token.objects.get_or_create(user=user)
    return token


@transaction.atomic
def curator_ensure(*, username: str, tenant: Tenant, password: str | None = None):
    """A staff user in the curators group (may edit knowledge in the admin)."""
    return staff_member_ensure(username=username, tenant=tenant, password=password, groups=("curators",))


@transaction.atomic
def staff_member_ensure(*, username: str, tenant: Tenant, groups: tuple[str, ...], password: str | None = None):
    """A staff user in the named admin groups, administrator of the tenant.

    Groups are named, not imported: each feature app creates and grants its own
    (see accounts/roles.py), so accounts depends on none of them.
    """
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"is_staff": True})
    if created:
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
    elif not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in groups))
    membership_ensure(user=user, tenant=tenant, role=Membership.Role.ADMIN)
    return user
