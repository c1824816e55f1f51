from django.urls import path

from mcp_server.views import mcp_endpoint

# Both spellings: MCP hosts are configured with either, and a POST cannot follow APPEND_SLASH's redirect.
urlpatterns = [
    path("mcp/", mcp_endpoint, name="mcp"),
    path("mcp", mcp_endpoint),
]
