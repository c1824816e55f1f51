"""An MCP client's session, tied to the conversation session that counts its fetches.

MCP hosts speak to ``/mcp/`` with an API token. A handshake-era client (protocol
2025-11-25 and older) carries the ``Mcp-Session-Id`` Contexto issued on
``initialize``; a client of the stateless 2026 revision carries none, and then the
token's user has one default MCP session. Either way the fetch budget and the
hand-offs live on an ordinary ``conversations.Session``, so operators see MCP
hand-offs in the same queue as the REST API's.
"""

from django.conf import settings
from django.db import models


class McpSession(models.Model):
    key = models.CharField(max_length=80, unique=True, help_text="The Mcp-Session-Id issued, or user:<id>.")
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="mcp_sessions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_sessions")
    conversation = models.OneToOneField(
        "conversations.Session",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="mcp_session",
        help_text="Created on the first tool call that needs one.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "MCP session"

    def __str__(self) -> str:
        return f"mcp session {self.pk}"
