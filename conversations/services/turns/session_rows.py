"""Steps 3 and 7: every write to the session row, in short transactions under its lock.

Concurrent messages to one session never lose an update of ``collected_packages``
or the enrichment counter because each write re-reads the row under
``select_for_update``; none of these transactions spans a provider call.
"""

from __future__ import annotations

from django.db import transaction

from conversations.exceptions import SessionNotOpenError
from conversations.models import Handoff, Message, MessageRole, MessageStatus, Session, SessionStatus
from conversations.services.sessions import session_transition

from .context_step import context_snapshot_store
from .grounding_step import grounding_record
from .idempotency import idempotent_response
from .outcome import TurnOutcome


def session_lock(session_id: int) -> Session:
    return Session.objects.select_for_update(of=("self",)).get(pk=session_id)


def turn_open(*, session: Session, text: str, context: dict | None, key: str | None, fingerprint: str):
    """Returns (inbound message, None) or (None, stored response) for an idempotent retry."""
    with transaction.atomic():
        locked = session_lock(session.pk)
        replay = idempotent_response(session=locked, key=key, fingerprint=fingerprint, reclaim_abandoned=True)
        if replay is not None:
            return None, replay
        if locked.status != SessionStatus.OPEN:
            raise SessionNotOpenError(details={"session_id": locked.pk, "status": locked.status})
        inbound = Message(
            session=locked,
            role=MessageRole.USER,
            text=text,
            status=MessageStatus.RECEIVED,
            idempotency_key=key or None,
            request_fingerprint=fingerprint,
        )
        inbound.full_clean()
        inbound.save()
        snapshot_id = context_snapshot_store(session=locked, inbound=inbound, context=context)
        if snapshot_id is not None:
            inbound.context_snapshot_id = snapshot_id
            inbound.save(update_fields=["context_snapshot_id"])
        # The seed: the enrichment counter restarts with every inbound message.
        locked.context_enrichment_count = 0
        locked.save(update_fields=["context_enrichment_count", "updated_at"])
        session.collected_packages = list(locked.collected_packages or [])  # as of this turn's start
        session.context_enrichment_count = 0
    return inbound, None


def fetch_record(*, session_id: int, package_id: str) -> list[str]:
    """Add a fetched package to the session (once) and count the fetch (always)."""
    with transaction.atomic():
        locked = session_lock(session_id)
        collected = list(locked.collected_packages or [])
        if package_id not in collected:
            collected.append(package_id)
        locked.collected_packages = collected
        locked.context_enrichment_count += 1
        locked.save(update_fields=["collected_packages", "context_enrichment_count", "updated_at"])
    return collected


def turn_close(
    *, session: Session, inbound: Message, outcome: TurnOutcome, timings: dict, extra: dict | None = None
) -> dict:
    grounding = grounding_record(outcome.grounding)
    with transaction.atomic():
        locked = session_lock(session.pk)
        reply = Message(
            session=locked,
            role=MessageRole.ASSISTANT,
            text=outcome.reply,
            status=outcome.status,
            reply_to=inbound,
            context_snapshot_id=inbound.context_snapshot_id,
            packages=[{"id": pid, "revision": rev} for pid, rev in outcome.packages.items()],
            catalog_version=outcome.catalog_version or None,
            llm_calls=outcome.llm_calls,
            context_enrichments=outcome.enrichments,
            timings_ms=timings,
            grounding=grounding,
        )
        reply.save()
        handoff = None
        if outcome.status == MessageStatus.HANDOFF:
            handoff = Handoff(
                session=locked, message=reply, reason=outcome.handoff_reason, detail=outcome.handoff_detail
            )
            handoff.full_clean()
            handoff.save()
            if locked.status == SessionStatus.OPEN:
                session_transition(session=locked, status=SessionStatus.HANDED_OFF)
        inbound.status = MessageStatus.PROCESSED
        inbound.save(update_fields=["status"])
        response = {
            "message_id": reply.pk,
            "session_id": locked.pk,
            "status": outcome.status,
            "reply": outcome.reply,
            "handoff": {"reason": handoff.reason, "detail": handoff.detail} if handoff else None,
            "packages": reply.packages,
            "catalog_version": outcome.catalog_version,
            "timings_ms": timings,
            "session_status": locked.status,
            "contextSnapshotId": inbound.context_snapshot_id,
            "grounding": grounding,
            **(extra or {}),
        }
        if outcome.ontology is not None:
            response["ontology"] = outcome.ontology
        reply.response = response
        reply.save(update_fields=["response"])
    return response
