"""Admin roles: create the groups and grant this app's permissions (see accounts/roles.py)."""

from django.db import migrations

from accounts.roles import grant_migration
from ontology.roles import ROLES


def rename_validators_group(apps, schema_editor):
    """The committee's group was "ontology_validators"; its members keep their rights as "validators"."""
    Group = apps.get_model("auth", "Group")
    old = Group.objects.filter(name="ontology_validators").first()
    if old is None:
        return
    new = Group.objects.filter(name="validators").first()
    if new is None:
        old.name = "validators"
        old.save(update_fields=["name"])
        return
    new.user_set.add(*old.user_set.all())
    new.permissions.add(*old.permissions.all())
    old.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("ontology", "0002_bundled_ontology"),
    ]

    operations = [
        migrations.RunPython(rename_validators_group, migrations.RunPython.noop),
        migrations.RunPython(grant_migration(ROLES), migrations.RunPython.noop),
    ]
