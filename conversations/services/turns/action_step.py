"""Step 4b: an UPDATE_FIELD intent goes to the action chain, never to the model.

The chain (planner, policy, preview; see docs/actions.md) lives in the
``actions`` app and is reached through ``settings.TURN_ACTION_HANDLER`` only, so
the turn does not import it; an empty setting leaves intents as proposals.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from conversations.context.services import PreparedContext
from conversations.models import Message, Session
from knowledge.catalog import get_active_catalog

from .outcome import TurnContext, TurnOutcome


def action_step(
    *, acting_user, session: Session, inbound: Message, context: PreparedContext | None, turn_context: TurnContext
) -> TurnOutcome | None:
    """The chain's answer (a preview, a question naming the expected form, a refusal), or None."""
    path = getattr(settings, "TURN_ACTION_HANDLER", "")
    if not path or not turn_context.response_fields.get("intent"):
        return None
    result = import_string(path)(
        session=session, inbound=inbound, user=acting_user, context=context, fields=turn_context.response_fields
    )
    if result is None:
        return None
    turn_context.response_fields["action"] = result["action"]
    if result.get("clarification"):
        turn_context.response_fields["clarification"] = result["clarification"]
    return TurnOutcome(status=result["status"], reply=result["reply"], catalog_version=get_active_catalog().version)
