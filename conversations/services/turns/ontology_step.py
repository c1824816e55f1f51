"""Step 5b: the ontology route for agents configured with an ontology, and its interruptions."""

from __future__ import annotations

from conversations.models import HandoffReason, MessageStatus, Session
from knowledge.catalog import get_active_catalog
from ontology.selectors import profile_get
from ontology.services import ontology_route
from ontology.services.routing import MAX_MESSAGE_CHARS

from .outcome import TurnOutcome


def ontology_for_turn(*, session: Session, text: str) -> dict | None:
    """The ontology route for this message (references made explicit), with the session
    user's profile skills."""
    if not session.agent.ontology:
        return None
    profile = profile_get(tenant=session.tenant, user=session.user) if session.user_id else None
    # a turn may be longer than a route reads: route on its opening, not fail a valid turn
    text = text[:MAX_MESSAGE_CHARS]
    return ontology_route(tenant=session.tenant, message=text, profile=profile, origin="turn").as_dict()


def ontology_interruption(ontology: dict | None) -> TurnOutcome | None:
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


def ontology_finish(outcome: TurnOutcome, ontology: dict | None) -> None:
    """Attach the route; an irreversible-risk answer carries the caveat and the escalation offer."""
    if ontology is None:
        return
    outcome.ontology = ontology
    if outcome.status == MessageStatus.ANSWERED:
        for item in ontology["interruptions"]:
            if item["type"] == "irreversible_risk":
                outcome.reply = f"{outcome.reply}\n\n{item['caveat']}"
