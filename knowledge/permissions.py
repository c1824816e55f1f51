"""Who may curate: the "curators" group edits knowledge; other staff read only."""

from django.contrib.auth.models import Group, Permission

from accounts.roles import CURATORS_GROUP, curators_group


def curators_group_ensure() -> Group:
    """The curators group with every knowledge permission (run after migrate, when permissions exist)."""
    group = curators_group()
    group.permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
    return group


def is_curator(user) -> bool:
    if not user.is_active or not user.is_staff:
        return False
    return user.is_superuser or user.groups.filter(name=CURATORS_GROUP).exists()
