"""Who may curate: the "curators" group edits knowledge; other staff read only."""

from django.contrib.auth.models import Group, Permission

CURATORS_GROUP = "curators"
CURATOR_APPS = ("knowledge",)


def curators_group_ensure() -> Group:
    group, _ = Group.objects.get_or_create(name=CURATORS_GROUP)
    perms = Permission.objects.filter(content_type__app_label__in=CURATOR_APPS)
    group.permissions.add(*perms)
    return group


def is_curator(user) -> bool:
    if not user.is_active or not user.is_staff:
        return False
    return user.is_superuser or user.groups.filter(name=CURATORS_GROUP).exists()
