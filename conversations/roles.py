"""What each admin group may do with conversations and the UI context (see accounts/roles.py).

Operators take hand-offs (read sessions and messages, resolve hand-offs, close
sessions). Curators also edit agents (their prompt is curated content), keep the
semantic registry and read context snapshots (what a turn saw). Accessible entities
are authorization data: tenant administrators manage them through the API.
"""

from accounts.roles import CURATORS, OPERATORS

OPERATOR_PERMISSIONS = (
    "view_agent",
    "view_session",
    "change_session",
    "view_message",
    "view_handoff",
    "change_handoff",
)

ROLES = {
    OPERATORS: {"conversations": OPERATOR_PERMISSIONS},
    CURATORS: {
        "conversations": (
            *OPERATOR_PERMISSIONS,
            "change_agent",
            "view_semanticelement",
            "add_semanticelement",
            "change_semanticelement",
            "delete_semanticelement",
            "view_contextsnapshot",
        )
    },
}
