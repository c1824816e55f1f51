"""What a turn produces and carries between its steps: results, outcomes, the UI context's part."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from conversations.models import HandoffReason, MessageStatus

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
    """What the UI context contributes to a turn (the context step fills it)."""

    snapshot_id: int | None = None
    clarification: str = ""  # a question back to the user instead of a guess
    # {"message": the rewritten message, "semantic_context": {focus, parent_ids, page},
    #  "linked_packages": registry links of the focus, then its parents, then the page,
    #  "package_links": the same links by semantic id}
    routing_hints: dict = field(default_factory=dict)
    user_text: str = ""  # the message with its references made explicit (router and agent)
    prompt_context: str = ""  # the minimized UI-context block for the system prompt
    response_fields: dict = field(default_factory=dict)  # intent, recordChange, clarification, resolution
