from django.apps import AppConfig
from django.db.models.signals import post_migrate

OPERATORS_GROUP = "operators"  # accounts.roles.OPERATORS


def _grant_roles(sender, **kwargs):
    from accounts.roles import groups_grant
    from conversations.roles import ROLES

    groups_grant(ROLES)


class ConversationsConfig(AppConfig):
    name = "conversations"

    def ready(self):
        # The data migration creates the groups; this re-grants after every migrate and flush.
        post_migrate.connect(_grant_roles, sender=self, dispatch_uid="conversations_roles")
