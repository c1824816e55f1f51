"""Steps 3 and 7: every write to the session row, in short transactions under its lock.

Concurrent messages to one session never lose an update of ``collected_packages``
or the enrichment counter because each write re-reads the row under
``select_for_update``; none of these transactions spans a provider call.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from conversations.context.services import PreparedContext
from conversations.exceptions import SessionNotFoundError, SessionNotOpenError
from common.raw_select import columns, insert, locked, row_instances
from conversations.models import Agent, Handoff, Message, MessageRole, MessageStatus, Session, SessionStatus
from conversations.services.sessions import session_transition
from knowledge.selectors import CATALOG_VERSION_SUBSELECT, catalog_version_seen

from .context_step import context_snapshot_store, context_validate
from .grounding_step import grounding_record
from .idempotency import idempotent_response, response_with_id
from .outcome import TurnOutcome


def session_lock(session_id: int) -> Session:
    return Session.objects.select_for_update(of=("self",)).get(pk=session_id)


# The turn's own writes to rows it already holds, written by hand: the ORM compiled each of these
# one-row statements on every turn (about a third of a millisecond of CPU apiece).
_SESSION = Session._meta.db_table
_MESSAGE = Message._meta.db_table
_SESSION_STATUS = f'SELECT "{_SESSION}"."status" FROM "{_SESSION}" WHERE "{_SESSION}"."id" = %s'
_SESSION_SEED = (
    f'UPDATE "{_SESSION}" SET "context_enrichment_count" = 0, "updated_at" = %s WHERE "{_SESSION}"."id" = %s'
)
_MESSAGE_STATUS = f'UPDATE "{_MESSAGE}" SET "status" = %s WHERE "{_MESSAGE}"."id" = %s'


# With the active catalog's version: the turn's catalog and router read it once per turn anyway
# (knowledge.selectors.catalog_version_read_once); read here, it costs no round trip of its own.
_SESSION_WITH_AGENT = (
    f"SELECT {columns(Session)[1]}, {columns(Agent)[1]}, {CATALOG_VERSION_SUBSELECT} "
    f'FROM "{_SESSION}" INNER JOIN "{Agent._meta.db_table}" '
    f'ON ("{_SESSION}"."agent_id" = "{Agent._meta.db_table}"."id") '
    f'WHERE "{_SESSION}"."tenant_id" = %s AND "{_SESSION}"."id" = %s'
)


def session_with_agent_lock(*, tenant, session_id) -> Session | None:
    """The tenant's session, locked (inside a transaction), with its agent and tenant set; None if
    the tenant has no such session. The catalog version read along is this turn's
    (``catalog_version_seen``)."""
    try:
        session_id = int(session_id)
    except (TypeError, ValueError):
        return None
    with connection.cursor() as cursor:
        cursor.execute(locked(_SESSION_WITH_AGENT, of=_SESSION), [tenant.pk, session_id])
        row = cursor.fetchone()
    if row is None:
        return None
    catalog_version_seen(row[-1])
    session, agent = row_instances(row[:-1], [Session, Agent])
    session.agent = agent
    session.tenant = tenant  # the filter made it so: reading it later costs no query
    return session


def session_status_lock(session_id: int) -> str:
    """Lock the session row (inside a transaction) and return its status now."""
    with connection.cursor() as cursor:
        cursor.execute(locked(_SESSION_STATUS), [session_id])
        row = cursor.fetchone()
    if row is None:
        raise Session.DoesNotExist(f"session {session_id} no longer exists")
    return row[0]


@dataclass(frozen=True)
class OpenedTurn:
    session: Session  # the locked row, with its agent; ``collected_packages`` as of this turn's start
    inbound: Message | None = None
    context: PreparedContext | None = None
    replay: dict | None = None  # the stored response of an idempotent retry (nothing written)


def turn_open(
    *, acting_user, tenant, session_id, text: str, context: dict | None, key: str | None, fingerprint: str
) -> OpenedTurn:
    """Read and lock the tenant's session, validate the UI context, store the inbound message.

    One read of the session (locked, with its agent) serves the whole turn: the 404, the
    idempotency check, the status check and the agent. The context is validated before
    anything is written; a rejection raises and the transaction leaves nothing behind.
    """
    with transaction.atomic():
        session = session_with_agent_lock(tenant=tenant, session_id=session_id)
        if session is None:
            raise SessionNotFoundError(details={"session_id": str(session_id)})
        replay = idempotent_response(session=session, key=key, fingerprint=fingerprint, reclaim_abandoned=True)
        if replay is not None:
            return OpenedTurn(session=session, replay=replay)
        prepared = context_validate(acting_user=acting_user, tenant=tenant, session=session, context=context)
        if session.status != SessionStatus.OPEN:
            raise SessionNotOpenError(details={"session_id": session.pk, "status": session.status})
        inbound = Message(
            session=session,
            role=MessageRole.USER,
            text=text,
            status=MessageStatus.RECEIVED,
            idempotency_key=key or None,
            request_fingerprint=fingerprint,
            # Stored first so the inbound row is written once, with its snapshot.
            context_snapshot_id=context_snapshot_store(session=session, context=prepared),
        )
        # Not the session: its row is locked above, so neither its existence (a SELECT) nor the
        # idempotency key's uniqueness (checked under the lock, and a database constraint) needs a query.
        inbound.full_clean(exclude=["session", "context_snapshot"])
        # The seed: the enrichment counter restarts with every inbound message (and updated_at
        # is the session's last activity, shown by the API and the admin).
        session.context_enrichment_count = 0
        session.updated_at = timezone.now()
        # inbound.save() and the seed's UPDATE in one statement (common.raw_select.insert)
        insert(inbound, along=(_SESSION_SEED, [session.updated_at, session.pk]))
        session.collected_packages = list(session.collected_packages or [])
    return OpenedTurn(session=session, inbound=inbound, context=prepared)


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
    """Store the reply with its response in one INSERT and mark the inbound message processed.

    The stored response is the API's without ``message_id`` (the reply's own primary key, not
    known before the INSERT; ``idempotency.idempotent_response`` puts it back), so no UPDATE
    follows the INSERT.
    """
    grounding = grounding_record(outcome.grounding)
    is_handoff = outcome.status == MessageStatus.HANDOFF
    with transaction.atomic():
        status_now = session_status_lock(session.pk)  # a concurrent close or hand-off shows here
        hands_off_session = is_handoff and status_now == SessionStatus.OPEN
        stored = {
            "session_id": session.pk,
            "status": outcome.status,
            "reply": outcome.reply,
            "handoff": {"reason": outcome.handoff_reason, "detail": outcome.handoff_detail} if is_handoff else None,
            "packages": [{"id": pid, "revision": rev} for pid, rev in outcome.packages.items()],
            "catalog_version": outcome.catalog_version,
            "timings_ms": timings,
            "session_status": SessionStatus.HANDED_OFF if hands_off_session else status_now,
            "contextSnapshotId": inbound.context_snapshot_id,
            "grounding": grounding,
            **(extra or {}),
        }
        if outcome.ontology is not None:
            stored["ontology"] = outcome.ontology
        reply = Message(
            session=session,
            role=MessageRole.ASSISTANT,
            text=outcome.reply,
            status=outcome.status,
            reply_to=inbound,
            context_snapshot_id=inbound.context_snapshot_id,
            packages=stored["packages"],
            catalog_version=outcome.catalog_version or None,
            llm_calls=outcome.llm_calls,
            context_enrichments=outcome.enrichments,
            timings_ms=timings,
            grounding=grounding,
            response=stored,
        )
        # The reply and the inbound message answered, in one statement (common.raw_select.insert).
        insert(reply, along=(_MESSAGE_STATUS, [MessageStatus.PROCESSED, inbound.pk]))
        inbound.status = MessageStatus.PROCESSED
        if is_handoff:
            handoff = Handoff(
                session=session, message=reply, reason=outcome.handoff_reason, detail=outcome.handoff_detail
            )
            handoff.full_clean(exclude=["session", "message"])  # both rows are this transaction's
            handoff.save()
            if hands_off_session:
                session.status = status_now  # the locked row's, not the turn's opening read
                session_transition(session=session, status=SessionStatus.HANDED_OFF)
    return response_with_id(stored, reply.pk)
