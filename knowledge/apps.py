from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _grant_roles(sender, **kwargs):
    from accounts.roles import groups_grant
    from knowledge.roles import ROLES

    groups_grant(ROLES)


class KnowledgeConfig(AppConfig):
    name = "knowledge"

    def ready(self):
        # The data migration creates the groups; this re-grants after every migrate and flush.
        post_migrate.connect(_grant_roles, sender=self, dispatch_uid="knowledge_roles")
