from django.apps import AppConfig
from django.db.models.signals import post_migrate

OPERATORS_GROUP = "operators"

# Who works the admin's conversation pages. Operators take hand-offs (read sessions and
# messages, resolve hand-offs, close sessions); curators also edit agents (their prompt is
# curated content). The UI-context models of this app are left to their own admin rules.
OPERATOR_PERMISSIONS = (
    "view_agent",
    "view_session",
    "change_session",
    "view_message",
    "view_handoff",
    "change_handoff",
)
CURATOR_PERMISSIONS = OPERATOR_PERMISSIONS + ("change_agent",)


def ensure_conversation_groups(sender, **kwargs):
    """Runs after migrate because permissions exist only then (as ontology's groups do)."""
    from django.contrib.auth.models import Group, Permission

    from accounts.roles import CURATORS_GROUP

    perms = Permission.objects.filter(content_type__app_label="conversations")
    if not perms.exists():
        return
    operators, _ = Group.objects.get_or_create(name=OPERATORS_GROUP)
    operators.permissions.add(*perms.filter(codename__in=OPERATOR_PERMISSIONS))
    curators, _ = Group.objects.get_or_create(name=CURATORS_GROUP)
    curators.permissions.add(*perms.filter(codename__in=CURATOR_PERMISSIONS))


class ConversationsConfig(AppConfig):
    name = "conversations"

    def ready(self):
        post_migrate.connect(ensure_conversation_groups, sender=self, dispatch_uid="conversation_groups")
