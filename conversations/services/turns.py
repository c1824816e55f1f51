"""The agent turn: one inbound user message in, one reply out.

    1. idempotent retry?  → the first response, no provider call
    2. validate the UI context (issue 5 plugs in: ``_context_validate``)
    3. open the turn       (short transaction, session row locked): status check,
                           inbound message, context snapshot, enrichment counter reset
    4. resolve references  (issue 5 plugs in: ``_references_resolve``; may ask back)
    5. knowledge set       (``knowledge_set_for_turn``: the knowledge router)
    6. the agent loop      (no transaction held): prompt → provider → reply contract;
                           s=99 fetches under the per-message budget; hand-offs
    7. close the turn      (short transaction, session row locked): reply, hand-off,
                           session status, stored response

The provider call never runs inside a transaction; every write to the session
row happens under ``select_for_update``, so concurrent messages to one session
never lose an update of ``collected_packages`` or the counter.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from conversations.context.routing import focus_first
from conversations.context.services import (
    PreparedContext,
    context_prepare,
    context_resolve,
    context_snapshot_create,
)
from conversations.exceptions import (
    IdempotencyKeyReusedError,
    IdempotentRequestInProgressError,
    SessionNotOpenError,
)
from conversations.llm import ChatMessage, LLMConfigError, ProviderUnavailable
from conversations.llm_settings import provider_for
from conversations.models import (
    ContextSnapshot,
    Handoff,
    HandoffReason,
    Message,
    MessageRole,
    MessageStatus,
    Session,
    SessionStatus,
)
from conversations.prompts import KnowledgeSet, build_call
from conversations.protocol import parse_agent_reply
from conversations.selectors import session_get, session_history
from conversations.services.grounding import RETRY as GROUNDING_RETRY
from conversations.services.grounding import answer_grounding, delivered_texts, grounding_record
from knowledge.catalog import Catalog, get_active_catalog
from knowledge.feedback import fetch_feedback_record_for_session
from knowledge.retrieval.router import WIKILINK_RE
from knowledge.router import route_context

logger = logging.getLogger("conversations.turns")

MAX_LINKED_PACKAGES = 3  # registry-linked bodies always delivered for the focus, its parents and the page
HISTORY_MESSAGES = 20  # earlier turns the model sees; older ones add cost, rarely meaning

HANDOFF_MESSAGE = (
    "Vou encaminhar sua mensagem para uma pessoa da nossa equipe, que poderá ajudar melhor. Obrigado pela paciência!"
)
PROVIDER_UNAVAILABLE_MESSAGE = (
    "Desculpe, nosso assistente está indisponível no momento. Encaminhei sua mensagem para uma "
    "pessoa da nossa equipe, que vai continuar o atendimento em breve."
)


def max_enrichments() -> int:
    return int(getattr(settings, "MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE", 2))


def max_calls() -> int:
    return int(getattr(settings, "MAX_AGENT_CALLS_PER_TURN", 10))


@dataclass(frozen=True)
class TurnResult:
    response: dict[str, Any]
    replayed: bool = False  # True when an Idempotency-Key retry got the stored response


@dataclass
class TurnOutcome:
    status: str
    reply: str
    handoff_reason: str = ""
    handoff_detail: str = ""
    llm_calls: int = 0
    enrichments: int = 0
    llm_ms: int = 0
    catalog_version: int = 0
    packages: dict[str, int] = field(default_factory=dict)  # delivered ID → revision, in order
    ontology: dict | None = None  # the ontology route, for agents configured with an ontology
    grounding: Any = None  # explanations.numbers.grounding.Grounding of the answer, when the agent answered

    @classmethod
    def handoff(cls, reason: str, detail: str, **kwargs) -> "TurnOutcome":
        message = PROVIDER_UNAVAILABLE_MESSAGE if reason == HandoffReason.PROVIDER_UNAVAILABLE else HANDOFF_MESSAGE
        return cls(
            status=MessageStatus.HANDOFF, reply=message, handoff_reason=reason, handoff_detail=detail[:500], **kwargs
        )


@dataclass(frozen=True)
class TurnContext:
    """What the UI context contributes to a turn (filled in by the context issue)."""

    snapshot_id: int | None = None
    clarification: str = ""  # a question back to the user instead of a guess
    # {"message": the rewritten message, "semantic_context": {focus, parent_ids, page},
    #  "linked_packages": registry links of the focus, then its parents, then the page,
    #  "package_links": the same links by semantic id}
    routing_hints: dict = field(default_factory=dict)
    user_text: str = ""  # the message with its references made explicit (router and agent)
    prompt_context: str = ""  # the minimized UI-context block for the system prompt
    response_fields: dict = field(default_factory=dict)  # intent, recordChange, clarification, resolution


# --- 1. idempotency ------------------------------------------------------------------


def request_fingerprint(*, text: str, context: Any) -> str:
    canonical = json.dumps({"message": text, "context": context}, sort_keys=True, ensure_ascii=False, default=str)
    # surrogatepass: a lone surrogate in the context must reach the context validator (a 400
    # naming the field), not crash here; valid text encodes exactly as plain UTF-8.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def idempotent_turn_stale_seconds() -> int:
    return int(getattr(settings, "IDEMPOTENT_TURN_STALE_SECONDS", 900))


def _idempotent_response(
    *, session: Session, key: str | None, fingerprint: str, reclaim_abandoned: bool = False
) -> dict | None:
    """The stored response for a retried key; None when the key is new (or its turn was abandoned).

    A turn still unanswered after ``IDEMPOTENT_TURN_STALE_SECONDS`` died with its process
    (worker killed, deploy): its key would otherwise answer 409 forever. Under the session
    lock (``reclaim_abandoned``) the dead inbound row is removed so the retry runs afresh.
    """
    if not key:
        return None
    inbound = (
        Message.objects.filter(session=session, role=MessageRole.USER, idempotency_key=key)
        .select_related("reply")
        .first()
    )
    if inbound is None:
        return None
    if inbound.request_fingerprint != fingerprint:
        raise IdempotencyKeyReusedError(details={"idempotency_key": key})
    reply = getattr(inbound, "reply", None)
    if reply is None or reply.response is None:
        age = (timezone.now() - inbound.created_at).total_seconds()
        if reply is not None or inbound.status != MessageStatus.RECEIVED or age < idempotent_turn_stale_seconds():
            raise IdempotentRequestInProgressError(details={"idempotency_key": key})
        if reclaim_abandoned:
            _abandoned_turn_discard(session=session, inbound=inbound, age=age)
        return None
    return reply.response


def _abandoned_turn_discard(*, session: Session, inbound: Message, age: float) -> None:
    Message.objects.filter(pk=inbound.pk, status=MessageStatus.RECEIVED, reply__isnull=True).delete()
    if inbound.context_snapshot_id is not None:
        ContextSnapshot.objects.filter(pk=inbound.context_snapshot_id, session=session).delete()
    logger.warning("turn abandoned session=%s message=%s age_s=%d", session.pk, inbound.pk, age)


# --- 2–4. context (issue 5) --------------------------------------------------------------


EMPTY_CONTEXT_FIELDS = {"intent": None, "recordChange": None, "clarification": None, "resolution": None}


def _context_validate(*, acting_user, tenant, session: Session, context: dict | None) -> PreparedContext | None:
    """Validate the AgentContext before anything is written (size, schema, age, authorization).

    A whole context or ``{baseSnapshotId, delta}``; raises a ContextError (4xx) on rejection.
    """
    if context is None:
        return None
    return context_prepare(tenant=tenant, user=acting_user, session=session, payload=context)


def _context_snapshot_store(*, session: Session, inbound: Message, context: PreparedContext | None) -> int | None:
    """Store the validated context as a snapshot; return its id (inside the open-turn transaction)."""
    if context is None:
        return None
    return context_snapshot_create(session=session, prepared=context).pk


def _references_resolve(*, session: Session, inbound: Message, context: PreparedContext | None) -> TurnContext:
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
        response_fields=turn.response_fields(),
    )


# --- 5. knowledge set ----------------------------------------------------------------------


def knowledge_set_for_turn(*, session: Session, text: str, turn_context: TurnContext, catalog: Catalog) -> KnowledgeSet:
    """The packages the router delivers for this message (bodies) or offers (listed).

    The router searches the message with its references made explicit and
    boosts the packages tied to the user's focus, its parents and the page.
    The delivered bodies are ordered focus first (``context.routing.focus_first``):
    the packages tied to the focus (their ``semantic_ids`` or the registry's
    links), then its parents', then wiki-link neighbours, then the rest. With
    ``AGENT_KNOWLEDGE_ROUTER = False`` the agent gets the catalog alone; when the
    router fails, the catalog plus the registry's links; it fetches with s=99.
    """
    linked = [pid for pid in turn_context.routing_hints.get("linked_packages") or [] if catalog.get(pid)]
    linked = linked[:MAX_LINKED_PACKAGES]
    if not getattr(settings, "AGENT_KNOWLEDGE_ROUTER", True):
        return KnowledgeSet()
    try:
        result = route_context(
            message=text,
            semantic_context=turn_context.routing_hints.get("semantic_context") or None,
            session_key=_router_session_key(session),
            tenant=session.tenant,
        )
    except Exception as exc:  # noqa: BLE001 - the router boundary: a turn degrades, never fails
        logger.error("turn.router_failed session=%s error=%s", session.pk, exc.__class__.__name__)
        return KnowledgeSet(full_ids=tuple(linked))
    full = focus_first(
        [*linked, *result.full_ids],
        semantic_context=turn_context.routing_hints.get("semantic_context"),
        semantic_ids_of=lambda pid: entry.semantic_ids if (entry := catalog.get(pid)) else (),
        registry_links=turn_context.routing_hints.get("package_links"),
        wikilinks_of=lambda pid: _wikilinks(catalog, pid),
    )
    listed = [pid for pid in [*result.listed_ids, *(p.id for p in result.procedures)] if pid not in full]
    return KnowledgeSet(full_ids=tuple(full), listed_ids=tuple(dict.fromkeys(listed)))


def _wikilinks(catalog: Catalog, package_id: str) -> list[str]:
    entry = catalog.get(package_id)
    targets = (catalog.resolve(raw) for raw in WIKILINK_RE.findall(entry.body or "")) if entry else ()
    return [t.package_id for t in targets if t is not None]


def _router_session_key(session: Session) -> str:
    return f"conversation:{session.pk}"


def _fetch_feedback(*, session: Session, package_id: str) -> None:
    """Teach the router: a package fetched after it was only listed ranks higher next time."""
    if not getattr(settings, "AGENT_KNOWLEDGE_ROUTER", True):
        return
    try:
        fetch_feedback_record_for_session(
            session_key=_router_session_key(session), package_id=package_id, tenant=session.tenant
        )
    except Exception as exc:  # noqa: BLE001 - feedback is a hint; losing one never fails a turn
        logger.error("turn.fetch_feedback_failed session=%s error=%s", session.pk, exc.__class__.__name__)


# --- 5b. ontology routing (agents with ``ontology``) -----------------------------------------------


def _ontology_for_turn(*, session: Session, text: str) -> dict | None:
    """The ontology route for this message (references made explicit), with the session
    user's profile skills."""
    if not session.agent.ontology:
        return None
    from ontology.selectors import profile_get
    from ontology.services import ontology_route
    from ontology.services.routing import MAX_MESSAGE_CHARS

    profile = profile_get(tenant=session.tenant, user=session.user) if session.user_id else None
    # a turn may be longer than a route reads: route on its opening, not fail a valid turn
    text = text[:MAX_MESSAGE_CHARS]
    return ontology_route(tenant=session.tenant, message=text, profile=profile, origin="turn").as_dict()


def _ontology_interruption(ontology: dict | None) -> TurnOutcome | None:
    """The seed's interruptions that replace the LLM call: ask back, or hand off to the guardian."""
    if not ontology:
        return None
    for item in ontology["interruptions"]:
        if item["type"] in ("clarifying_question", "disambiguation"):
            reply = "\n".join(q["text"] for q in item["questions"])
            return TurnOutcome(
                status=MessageStatus.CLARIFICATION, reply=reply, catalog_version=get_active_catalog().version
            )
        if item["type"] == "guardian_handoff":
            return TurnOutcome.handoff(
                HandoffReason.GUARDIAN,
                f"ontology: critical skill {item['skill']} → {item['agent']}",
                catalog_version=get_active_catalog().version,
            )
    return None


def _ontology_finish(outcome: TurnOutcome, ontology: dict | None) -> None:
    """Attach the route; an irreversible-risk answer carries the caveat and the escalation offer."""
    if ontology is None:
        return
    outcome.ontology = ontology
    if outcome.status == MessageStatus.ANSWERED:
        for item in ontology["interruptions"]:
            if item["type"] == "irreversible_risk":
                outcome.reply = f"{outcome.reply}\n\n{item['caveat']}"


# --- 3. and 7. the session row, always locked ---------------------------------------------------


def _session_lock(session_id: int) -> Session:
    return Session.objects.select_for_update(of=("self",)).get(pk=session_id)


def _turn_open(*, session: Session, text: str, context: dict | None, key: str | None, fingerprint: str):
    """Returns (inbound message, None) or (None, stored response) for an idempotent retry."""
    with transaction.atomic():
        locked = _session_lock(session.pk)
        replay = _idempotent_response(session=locked, key=key, fingerprint=fingerprint, reclaim_abandoned=True)
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
        snapshot_id = _context_snapshot_store(session=locked, inbound=inbound, context=context)
        if snapshot_id is not None:
            inbound.context_snapshot_id = snapshot_id
            inbound.save(update_fields=["context_snapshot_id"])
        # The seed: the enrichment counter restarts with every inbound message.
        locked.context_enrichment_count = 0
        locked.save(update_fields=["context_enrichment_count", "updated_at"])
        session.collected_packages = list(locked.collected_packages or [])  # as of this turn's start
        session.context_enrichment_count = 0
    return inbound, None


def _fetch_record(*, session_id: int, package_id: str) -> list[str]:
    """Add a fetched package to the session (once) and count the fetch (always)."""
    with transaction.atomic():
        locked = _session_lock(session_id)
        collected = list(locked.collected_packages or [])
        if package_id not in collected:
            collected.append(package_id)
        locked.collected_packages = collected
        locked.context_enrichment_count += 1
        locked.save(update_fields=["collected_packages", "context_enrichment_count", "updated_at"])
    return collected


def _turn_close(
    *, session: Session, inbound: Message, outcome: TurnOutcome, timings: dict, extra: dict | None = None
) -> dict:
    grounding = grounding_record(outcome.grounding)
    with transaction.atomic():
        locked = _session_lock(session.pk)
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
                from conversations.services.sessions import session_transition

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


# --- 6. the agent loop --------------------------------------------------------------------------


def _agent_loop(
    *, session: Session, inbound: Message, turn_context: TurnContext, ontology: dict | None = None
) -> TurnOutcome:
    agent = session.agent
    budget = max_enrichments()
    cap = max_calls()
    history = session_history(session=session, before=inbound, limit=HISTORY_MESSAGES)
    catalog = get_active_catalog()
    # The router searches the message with its references made explicit (labels, record, tab).
    knowledge_set = knowledge_set_for_turn(
        session=session, text=turn_context.user_text or inbound.text, turn_context=turn_context, catalog=catalog
    )
    if ontology is not None:
        knowledge_set = dataclasses.replace(knowledge_set, ontology_context=ontology["context"])
    collected = list(session.collected_packages or [])
    state = TurnOutcome(status=MessageStatus.ANSWERED, reply="", catalog_version=catalog.version)

    def handoff(reason: str, detail: str) -> TurnOutcome:
        return TurnOutcome.handoff(
            reason,
            detail,
            llm_calls=state.llm_calls,
            enrichments=state.enrichments,
            llm_ms=state.llm_ms,
            catalog_version=state.catalog_version,
            packages=state.packages,
            grounding=state.grounding,
        )

    correction: tuple[ChatMessage, ...] = ()  # the grounding retry: the answer and what was wrong with it

    try:
        provider = provider_for(agent)
    except LLMConfigError:
        return handoff(HandoffReason.PROVIDER_UNAVAILABLE, "The agent's LLM configuration is invalid.")

    while True:
        if state.llm_calls >= cap:
            return handoff(HandoffReason.ITERATION_CAP, f"{cap} provider calls in one turn without an answer.")
        if state.llm_calls:
            # Read fresh on every call: an admin edit or deactivation shows on the next call.
            catalog = get_active_catalog()
        state.catalog_version = catalog.version
        prepared = build_call(
            agent=agent,
            catalog=catalog,
            knowledge_set=knowledge_set,
            collected_ids=collected,
            history=history,
            user_text=turn_context.user_text or inbound.text,
            budget=budget,
            ui_context=turn_context.prompt_context,
        )
        for delivered in prepared.delivered:
            state.packages[delivered.package_id] = delivered.revision
        request = prepared.request
        if correction:
            request = dataclasses.replace(request, messages=request.messages + correction)
        state.llm_calls += 1
        started = time.monotonic()
        try:
            result = provider.complete(request)
        except ProviderUnavailable as exc:
            state.llm_ms += _ms_since(started)
            logger.warning(
                "provider unavailable session=%s message=%s provider=%s reason=%s attempts=%s",
                session.pk,
                inbound.pk,
                getattr(provider, "name", "?"),
                exc.reason,
                exc.attempts,
            )
            return handoff(HandoffReason.PROVIDER_UNAVAILABLE, f"LLM provider unavailable ({exc.reason}).")
        except Exception as exc:  # the provider boundary: a turn is saved, never a 500
            state.llm_ms += _ms_since(started)
            logger.error(
                "provider failed session=%s message=%s error=%s", session.pk, inbound.pk, exc.__class__.__name__
            )
            return handoff(HandoffReason.PROVIDER_UNAVAILABLE, f"LLM provider failed ({exc.__class__.__name__}).")
        state.llm_ms += _ms_since(started)

        reply = parse_agent_reply(result.text)
        if reply.kind == "answer":
            decision = answer_grounding(
                policy=agent.number_policy,
                reply=reply.message,
                delivered=delivered_texts(
                    request=prepared.request,
                    agent_prompt=agent.system_prompt,
                    user_texts=[inbound.text, turn_context.user_text, *(t for r, t in history if r == "user")],
                    ui_context=turn_context.prompt_context + "\n" + knowledge_set.ontology_context,
                ),
                retried=bool(correction),
                calls_left=cap - state.llm_calls,
            )
            state.grounding = decision.grounding
            if decision.action == GROUNDING_RETRY:
                correction = (ChatMessage("assistant", result.text), ChatMessage("user", decision.correction))
                continue
            if decision.action == "handoff":
                unmatched = len(decision.grounding.unmatched)
                return handoff(
                    HandoffReason.UNGROUNDED_NUMBER, f"{unmatched} cited number(s) not in what the turn delivered."
                )
            state.reply = reply.message
            return state
        if reply.kind == "handoff":
            return handoff(HandoffReason.AGENT_REQUEST, reply.reason or "The agent asked for a person.")
        if reply.kind == "invalid":
            return handoff(HandoffReason.INVALID_REPLY, f"Unusable agent reply ({reply.error}).")

        # s=99: never let the model answer without the package it asked for.
        problem = reply.fetch_problem
        if problem:
            return handoff(HandoffReason.UNCERTAINTY, f"s=99 with {problem.replace('_', ' ')} context_needed.")
        requested = reply.fetch_target
        entry = catalog.resolve(requested)
        if entry is None or not entry.body.strip():
            return handoff(
                HandoffReason.UNCERTAINTY, f"Requested package {requested[:100]!r} is unknown, inactive or empty."
            )
        collected = _fetch_record(session_id=session.pk, package_id=entry.package_id)
        _fetch_feedback(session=session, package_id=entry.package_id)
        state.enrichments += 1
        if state.enrichments > budget:
            return handoff(
                HandoffReason.BUDGET_EXCEEDED,
                f"Fetch {state.enrichments} in one message exceeds the budget of {budget} (last: {entry.package_id}).",
            )


def _ms_since(started: float) -> int:
    return int(round((time.monotonic() - started) * 1000))


# --- the service ---------------------------------------------------------------------------------


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
    started = time.monotonic()
    session = session_get(tenant=tenant, session_id=session_id)
    fingerprint = request_fingerprint(text=text, context=context)

    stored = _idempotent_response(session=session, key=idempotency_key, fingerprint=fingerprint)
    if stored is not None:
        return TurnResult(stored, replayed=True)

    context = _context_validate(acting_user=acting_user, tenant=tenant, session=session, context=context)
    inbound, stored = _turn_open(
        session=session, text=text, context=context, key=idempotency_key, fingerprint=fingerprint
    )
    if stored is not None:
        return TurnResult(stored, replayed=True)

    try:
        turn_context = _references_resolve(session=session, inbound=inbound, context=context)
        if turn_context.clarification:
            outcome = TurnOutcome(
                status=MessageStatus.CLARIFICATION,
                reply=turn_context.clarification,
                catalog_version=get_active_catalog().version,
            )
        else:
            try:
                ontology = _ontology_for_turn(session=session, text=turn_context.user_text or inbound.text)
            except Exception as exc:  # noqa: BLE001 - the ontology boundary
                # Its guardian and caveat rules protect the user: without them, a human answers.
                logger.error("turn.ontology_failed session=%s error=%s", session.pk, exc.__class__.__name__)
                outcome = TurnOutcome.handoff(
                    HandoffReason.UNCERTAINTY,
                    "The ontology route failed for this message.",
                    catalog_version=get_active_catalog().version,
                )
            else:
                outcome = _ontology_interruption(ontology) or _agent_loop(
                    session=session, inbound=inbound, turn_context=turn_context, ontology=ontology
                )
                _ontology_finish(outcome, ontology)
        total_ms = _ms_since(started)
        timings = {"total": total_ms, "llm": outcome.llm_ms, "overhead": max(total_ms - outcome.llm_ms, 0)}
        response = _turn_close(
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
