from django.contrib import admin

from mcp_server.models import McpSession


@admin.register(McpSession)
class McpSessionAdmin(admin.ModelAdmin):
    """Read-only: an MCP session is opened by a client; its hand-offs are on the conversation."""

    list_display = ["id", "tenant", "user", "conversation", "created_at", "closed_at"]
    list_filter = ["tenant"]
    list_select_related = ["tenant", "user", "conversation"]
    readonly_fields = ["key", "tenant", "user", "conversation", "created_at", "closed_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
