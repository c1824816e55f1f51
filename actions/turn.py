"""The turn's entry into the action chain (``settings.TURN_ACTION_HANDLER``).

The turn calls :func:`turn_action` after reference resolution. An
``UPDATE_FIELD`` intent never reaches the model: the planner and the policy
answer (a preview to confirm, a question naming the expected form, or a
plain refusal), so the agent never improvises an action.
"""

from __future__ import annotations

from typing import Any

from actions.services import IntentRequest, turn_action_plan


def turn_action(*, session, inbound, user, context, fields: dict[str, Any]) -> dict[str, Any] | None:
    """None when the message asks for no action; else {status, reply, action, clarification}."""
    intent = fields.get("intent")
    if not intent or context is None:
        return None
    resolution = fields.get("resolution") or {}
    target = resolution.get("target") or {}
    result = turn_action_plan(
        IntentRequest(
            tenant=session.tenant,
            user=user,
            session=session,
            message_id=inbound.pk,
            utterance=inbound.text,
            intent=intent,
            target_label=target.get("label") or "",
            parent_ids=tuple(target.get("parentIds") or ()),
            language=resolution.get("language") or "pt",
            context=context.redacted,
            context_sha256=context.validated.sha256,
        )
    )
    return {
        "status": result.status,
        "reply": result.reply,
        "action": result.action,
        "clarification": result.clarification,
    }
