from django.contrib.auth.management import create_permissions
from django.db import migrations


def groups_ensure(apps, schema_editor):
    from actions.permissions import action_groups_ensure

    # Permissions are normally created after migrate; the groups need them now.
    app_config = apps.get_app_config("actions")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    action_groups_ensure(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("actions", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(groups_ensure, migrations.RunPython.noop)]
