"""Who may curate: the "curators" group edits knowledge; other staff read only."""

from accounts.roles import CURATORS_GROUP


def is_curator(user) -> bool:
    if not user.is_active or not user.is_staff:
        return False
    return user.is_superuser or user.groups.filter(name=CURATORS_GROUP).exists()
