"""Steps 2 and 4: validate the UI context before anything is written, then resolve references."""

from __future__ import annotations

from conversations.context.services import (
    PreparedContext,
    context_prepare,
    context_resolve,
    context_snapshot_create,
)
from conversations.models import Message, Session

from .outcome import TurnContext

EMPTY_CONTEXT_FIELDS = {
    "intent": None,
    "recordChange": None,
    "clarification": None,
    "resolution": None,
    "action": None,  # filled by the action step (action_step.py)
}


def context_validate(*, acting_user, tenant, session: Session, context: dict | None) -> PreparedContext | None:
    """Validate the AgentContext before anything is written (size, schema, age, authorization).

    A whole context or ``{baseSnapshotId, delta}``; raises a ContextError (4xx) on rejection.
    """
    if context is None:
        return None
    return context_prepare(tenant=tenant, user=acting_user, session=session, payload=context)


def context_snapshot_store(*, session: Session, context: PreparedContext | None) -> int | None:
    """Store the validated context as a snapshot; return its id (inside the open-turn transaction)."""
    if context is None:
        return None
    return context_snapshot_create(session=session, prepared=context).pk


def references_resolve(*, session: Session, inbound: Message, context: PreparedContext | None) -> TurnContext:
    """Resolve "isso/este/aqui" against the context; ambiguity becomes a clarification."""
    if context is None:
        return TurnContext(snapshot_id=inbound.context_snapshot_id, response_fields=dict(EMPTY_CONTEXT_FIELDS))
    turn = context_resolve(prepared=context, text=inbound.text)
    resolution = turn.resolution
    return TurnContext(
        snapshot_id=inbound.context_snapshot_id,
        clarification=resolution.clarification.question if resolution.clarification else "",
        routing_hints={
            "message": resolution.rewritten_message,
            "semantic_context": turn.semantic_context,
            "linked_packages": list(turn.linked_packages),
            "package_links": turn.package_links,
        },
        user_text=resolution.rewritten_message,
        prompt_context=turn.prompt_context,
        response_fields={**turn.response_fields(), "action": None},
    )
