"""Staff roles as Django groups, shared by name, granted per app.

Each feature app names what each group may do with its own models; accounts knows the
roles without importing any feature app, and an app added later extends a role without
touching this module.

Every feature app keeps a ``roles.py`` with a table ``{group: {app_label: codenames}}``
and grants it twice with ``groups_grant``: in a data migration (the groups exist
right after ``migrate``, before anyone logs in) and after every ``migrate`` / ``flush``
(``post_migrate``), so permissions of models added later, and databases flushed by
tests, are covered too.

| group | works on |
|---|---|
| curators | knowledge, semantic registry, ontology chunks and skills, retrieval test; reads context snapshots |
| validators | validates high-criticality ontology chunks |
| operators | hand-off queue, sessions, explanation task results and retries, Celery task results |
| auditors | explanations (read-only, with their checks) and routing records |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions

CURATORS = "curators"
VALIDATORS = "validators"
OPERATORS = "operators"
AUDITORS = "auditors"
GROUPS = (CURATORS, VALIDATORS, OPERATORS, AUDITORS)
CURATORS_GROUP = CURATORS  # edit curated content (knowledge, ontology, agents) in the admin


class AllExcept(frozenset):
    """Every permission of the app but these codenames."""


ALL = AllExcept()

RoleTable = Mapping[str, Mapping[str, Iterable[str]]]


def groups_grant(table: RoleTable, *, apps=global_apps) -> None:
    """get_or_create each group by name and add (never remove) the permissions the table names.

    ``apps`` is the migration's historical registry inside a data migration. Permissions
    are created first: on a fresh database they otherwise appear only after migrate ends.
    """
    labels = {label for grants in table.values() for label in grants}
    for label in labels:
        try:
            app_config = apps.get_app_config(label)
        except LookupError:
            continue  # an optional third-party app that is not installed
        had_module = getattr(app_config, "models_module", None)
        app_config.models_module = had_module or True
        try:
            create_permissions(app_config, apps=apps, verbosity=0)
        finally:
            app_config.models_module = had_module
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group_name, grants in table.items():
        group, _ = Group.objects.get_or_create(name=group_name)
        for label, codenames in grants.items():
            perms = Permission.objects.filter(content_type__app_label=label)
            if isinstance(codenames, AllExcept):
                perms = perms.exclude(codename__in=codenames)
            else:
                wanted = set(codenames)
                perms = perms.filter(codename__in=wanted)
            group.permissions.add(*perms)


def grant_migration(table: RoleTable):
    """A RunPython body for an app's roles data migration."""

    def forwards(apps, schema_editor):
        groups_grant(table, apps=apps)

    return forwards


def curators_group():
    from django.contrib.auth.models import Group

    group, _ = Group.objects.get_or_create(name=CURATORS)
    return group
