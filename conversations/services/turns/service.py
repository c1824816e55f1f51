"""The turn service: the steps of one turn, in order (see the package's docstring)."""

from __future__ import annotations

import logging
import time

from conversations.models import ContextSnapshot, HandoffReason, Message, MessageStatus
from knowledge.catalog import get_active_catalog
from knowledge.selectors import catalog_version_read_once

from .action_step import action_step
from .agent_loop import agent_loop, ms_since
from .context_step import references_resolve
from .idempotency import request_fingerprint
from .ontology_step import ontology_finish, ontology_for_turn, ontology_interruption
from .outcome import TurnOutcome, TurnResult
from .session_rows import turn_close, turn_open

logger = logging.getLogger("conversations.turns")


def message_send(
    *,
    acting_user,
    tenant,
    session_id,
    text: str,
    context: dict | None = None,
    idempotency_key: str | None = None,
) -> TurnResult:
    """Run one turn for ``text`` in the tenant's session and return the API response.

    Not atomic on purpose: the provider call must not hold a transaction or a
    row lock; each write step takes its own short transaction.
    """
    # The router's index and the turn's catalog read the catalog version once between them.
    with catalog_version_read_once():
        return _message_send(
            acting_user=acting_user,
            tenant=tenant,
            session_id=session_id,
            text=text,
            context=context,
            idempotency_key=idempotency_key,
        )


def _message_send(
    *, acting_user, tenant, session_id, text: str, context: dict | None, idempotency_key: str | None
) -> TurnResult:
    started = time.monotonic()
    fingerprint = request_fingerprint(text=text, context=context)
    opened = turn_open(
        acting_user=acting_user,
        tenant=tenant,
        session_id=session_id,
        text=text,
        context=context,
        key=idempotency_key,
        fingerprint=fingerprint,
    )
    if opened.replay is not None:
        return TurnResult(opened.replay, replayed=True)
    session, inbound, context = opened.session, opened.inbound, opened.context

    try:
        turn_context = references_resolve(session=session, inbound=inbound, context=context)
        if turn_context.clarification:
            outcome = TurnOutcome(
                status=MessageStatus.CLARIFICATION,
                reply=turn_context.clarification,
                catalog_version=get_active_catalog().version,
            )
        elif action_outcome := action_step(
            acting_user=acting_user, session=session, inbound=inbound, context=context, turn_context=turn_context
        ):
            outcome = action_outcome
        else:
            try:
                ontology = ontology_for_turn(session=session, text=turn_context.user_text or inbound.text)
            except Exception as exc:  # noqa: BLE001 - the ontology boundary
                # Its guardian and caveat rules protect the user: without them, a human answers.
                logger.error("turn.ontology_failed session=%s error=%s", session.pk, exc.__class__.__name__)
                outcome = TurnOutcome.handoff(
                    HandoffReason.UNCERTAINTY,
                    "The ontology route failed for this message.",
                    catalog_version=get_active_catalog().version,
                )
            else:
                outcome = ontology_interruption(ontology) or agent_loop(
                    session=session, inbound=inbound, turn_context=turn_context, ontology=ontology
                )
                ontology_finish(outcome, ontology)
        total_ms = ms_since(started)
        timings = {"total": total_ms, "llm": outcome.llm_ms, "overhead": max(total_ms - outcome.llm_ms, 0)}
        response = turn_close(
            session=session, inbound=inbound, outcome=outcome, timings=timings, extra=turn_context.response_fields
        )
    except Exception:
        # A bug, not a provider failure: leave no half-finished turn (and free the idempotency key).
        Message.objects.filter(pk=inbound.pk, status=MessageStatus.RECEIVED).delete()
        if inbound.context_snapshot_id is not None:
            ContextSnapshot.objects.filter(pk=inbound.context_snapshot_id, session=session).delete()
        logger.error("turn failed session=%s message=%s", session.pk, inbound.pk)
        raise

    logger.info(
        "turn finished session=%s message=%s status=%s reason=%s llm_calls=%s enrichments=%s duration_ms=%s"
        " grounding=%s unmatched=%s",
        session.pk,
        response["message_id"],
        outcome.status,
        outcome.handoff_reason or "-",
        outcome.llm_calls,
        outcome.enrichments,
        response["timings_ms"]["total"],
        response["grounding"]["outcome"],
        len(response["grounding"]["unmatched"]),
    )
    return TurnResult(response)
