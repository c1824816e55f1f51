"""Admin groups for actions, created by this app's data migration (by name, idempotent).

Auditors read the audit trail, actions and capabilities, and change nothing;
operators also retry failed webhook executions.
"""

AUDITORS_GROUP = "auditors"
OPERATORS_GROUP = "operators"
AUDITOR_PERMISSIONS = ("view_actionaudit", "view_action", "view_capability")
OPERATOR_PERMISSIONS = ("view_action", "view_capability", "retry_action", "view_actionaudit")


def action_groups_ensure(apps) -> None:
    """``apps``: a migration's app registry, or ``django.apps.apps``."""
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    perms = Permission.objects.filter(content_type__app_label="actions")
    for name, codenames in ((AUDITORS_GROUP, AUDITOR_PERMISSIONS), (OPERATORS_GROUP, OPERATOR_PERMISSIONS)):
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*perms.filter(codename__in=codenames))
