"""Admin roles: create the groups and grant this app's permissions (see accounts/roles.py)."""

from django.db import migrations

from accounts.roles import grant_migration
from explanations.roles import ROLES


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("explanations", "0002_result_counts_labels_rounding"),
        ("django_celery_results", "0014_alter_taskresult_status"),
    ]

    operations = [migrations.RunPython(grant_migration(ROLES), migrations.RunPython.noop)]
