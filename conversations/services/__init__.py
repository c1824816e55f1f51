"""Writes of the conversations app (see STYLE.md: services are keyword-only)."""

from conversations.services.feedback import FeedbackResult, message_feedback_set
from conversations.services.handoffs import handoff_resolve
from conversations.services.sessions import session_close, session_create, session_transition
from conversations.services.turns import TurnResult, message_send

__all__ = [
    "FeedbackResult",
    "message_feedback_set",
    "TurnResult",
    "handoff_resolve",
    "message_send",
    "session_close",
    "session_create",
    "session_transition",
]
