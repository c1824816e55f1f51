"""Admin roles: create the groups and grant this app's permissions (see accounts/roles.py)."""

from django.db import migrations

from accounts.roles import grant_migration
from mcp_server.roles import ROLES


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("mcp_server", "0001_mcp_sessions"),
    ]

    operations = [migrations.RunPython(grant_migration(ROLES), migrations.RunPython.noop)]
