from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _grant_roles(sender, **kwargs):
    from accounts.roles import groups_grant
    from mcp_server.roles import ROLES

    groups_grant(ROLES)


class McpServerConfig(AppConfig):
    name = "mcp_server"
    verbose_name = "MCP server"

    def ready(self):
        post_migrate.connect(_grant_roles, sender=self, dispatch_uid="mcp_server_roles")
