from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_curators_group(sender, **kwargs):
    from knowledge.permissions import curators_group_ensure

    curators_group_ensure()


class KnowledgeConfig(AppConfig):
    name = "knowledge"

    def ready(self):
        # Permissions exist only after migrate; the group is (re)granted right after it.
        post_migrate.connect(_ensure_curators_group, sender=self)
