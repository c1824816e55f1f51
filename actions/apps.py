from django.apps import AppConfig
from django.db.models.signals import post_migrate


def ensure_action_groups(sender, **kwargs):
    """After every migrate and flush (permissions exist only then), as the other apps do; the
    data migration 0002 created the groups already on a first migrate."""
    from django.apps import apps
    from django.contrib.auth.models import Permission

    from actions.permissions import action_groups_ensure

    if Permission.objects.filter(content_type__app_label="actions").exists():
        action_groups_ensure(apps)


class ActionsConfig(AppConfig):
    name = "actions"
    verbose_name = "Actions (capabilities, executions, audit)"

    def ready(self):
        post_migrate.connect(ensure_action_groups, sender=self, dispatch_uid="action_groups")
