"""Step 6: prompt, provider, reply contract; s=99 fetches under the per-message budget.

No transaction is held here: the provider call can take seconds.
"""

from __future__ import annotations

import dataclasses
import logging
import time

from common.db_pool import db_connection_release
from conversations.models import HandoffReason, Message, MessageStatus, Session
from conversations.prompts import build_call
from conversations.protocol import parse_agent_reply
from conversations.selectors import session_history
from knowledge.catalog import get_active_catalog
from knowledge.selectors import catalog_version_reread
from llm import ChatMessage, LLMConfigError, ProviderUnavailable
from llm.runtime import provider_for

from .grounding_step import HANDOFF as GROUNDING_HANDOFF
from .grounding_step import RETRY as GROUNDING_RETRY
from .grounding_step import answer_grounding, with_correction
from .grounding_step import delivered_texts as turn_delivered
from .knowledge_step import fetch_feedback, knowledge_set_for_turn
from .outcome import TurnContext, TurnOutcome, max_calls, max_enrichments
from .session_rows import fetch_record

logger = logging.getLogger("conversations.turns")

HISTORY_MESSAGES = 20  # earlier turns the model sees; older ones add cost, rarely meaning


def agent_loop(
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
            catalog_version_reread()
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
        request = with_correction(prepared.request, correction)
        state.llm_calls += 1
        # The model may take seconds: its wait must not hold one of the pool's connections.
        db_connection_release()
        text, failure = _provider_reply(provider, request, state, session=session, inbound=inbound)
        if failure:
            return handoff(*failure)
        reply = parse_agent_reply(text)
        if reply.kind == "answer":
            decision = answer_grounding(
                policy=agent.number_policy,
                reply=reply.message,
                delivered=turn_delivered(
                    request=prepared.request,
                    agent=agent,
                    user_texts=[inbound.text, turn_context.user_text, *(t for r, t in history if r == "user")],
                    ui_context=turn_context.prompt_context + "\n" + knowledge_set.ontology_context,
                ),
                retried=bool(correction),
                calls_left=cap - state.llm_calls,
            )
            state.grounding = decision.grounding
            if decision.action == GROUNDING_RETRY:
                correction = (ChatMessage("assistant", text), ChatMessage("user", decision.correction))
                continue
            if decision.action == GROUNDING_HANDOFF:
                return handoff(HandoffReason.UNGROUNDED_NUMBER, decision.detail)
            state.reply = reply.message
            return state
        failure = _reply_handoff(reply)
        if failure:
            return handoff(*failure)
        requested = reply.fetch_target
        entry = catalog.resolve(requested)
        if entry is None or not entry.body.strip():
            return handoff(
                HandoffReason.UNCERTAINTY, f"Requested package {requested[:100]!r} is unknown, inactive or empty."
            )
        collected = fetch_record(session_id=session.pk, package_id=entry.package_id)
        fetch_feedback(session=session, package_id=entry.package_id)
        state.enrichments += 1
        if state.enrichments > budget:
            return handoff(
                HandoffReason.BUDGET_EXCEEDED,
                f"Fetch {state.enrichments} in one message exceeds the budget of {budget} (last: {entry.package_id}).",
            )


def _provider_reply(provider, request, state: TurnOutcome, *, session: Session, inbound: Message):
    """(the reply text, None), or (None, the hand-off reason and detail a provider failure calls for)."""
    started = time.monotonic()
    try:
        result = provider.complete(request)
    except ProviderUnavailable as exc:
        state.llm_ms += ms_since(started)
        logger.warning(
            "provider unavailable session=%s message=%s provider=%s reason=%s attempts=%s",
            session.pk,
            inbound.pk,
            getattr(provider, "name", "?"),
            exc.reason,
            exc.attempts,
        )
        return None, (HandoffReason.PROVIDER_UNAVAILABLE, f"LLM provider unavailable ({exc.reason}).")
    except Exception as exc:  # the provider boundary: a turn is saved, never a 500
        state.llm_ms += ms_since(started)
        logger.error("provider failed session=%s message=%s error=%s", session.pk, inbound.pk, exc.__class__.__name__)
        return None, (HandoffReason.PROVIDER_UNAVAILABLE, f"LLM provider failed ({exc.__class__.__name__}).")
    state.llm_ms += ms_since(started)
    return result.text, None


def _reply_handoff(reply) -> tuple[str, str] | None:
    """The hand-off a reply calls for when it is neither an answer nor a usable s=99."""
    if reply.kind == "handoff":
        return HandoffReason.AGENT_REQUEST, reply.reason or "The agent asked for a person."
    if reply.kind == "invalid":
        return HandoffReason.INVALID_REPLY, f"Unusable agent reply ({reply.error})."
    # s=99: never let the model answer without the package it asked for.
    if reply.fetch_problem:
        return HandoffReason.UNCERTAINTY, f"s=99 with {reply.fetch_problem.replace('_', ' ')} context_needed."
    return None


def ms_since(started: float) -> int:
    return int(round((time.monotonic() - started) * 1000))
