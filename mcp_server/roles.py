"""Operators see MCP sessions (each tied to the conversation that holds its hand-offs)."""

from accounts.roles import OPERATORS

ROLES = {OPERATORS: {"mcp_server": ("view_mcpsession",)}}
