"""Grounding step (after the agent answers): are the numbers of an agent's answer in what
the turn delivered, and what the agent's `number_policy` does when not.

Called once per answer from the agent loop with the reply and the texts the
turn delivered; the check itself is `explanations.numbers.grounding` (pure).
Neither the numbers nor the text are logged: counts and outcomes only.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from conversations.metrics import TURN_GROUNDING
from explanations.numbers.grounding import SKIPPED_GROUNDING, UNVERIFIED, Grounding, ground_reply

logger = logging.getLogger(__name__)

FLAG, RETRY, HANDOFF = "flag", "retry", "handoff"
DELIVER = "deliver"

CORRECTION = (
    "Sua resposta cita números que não estão no contexto que você recebeu: {numbers}. "
    "Responda de novo no mesmo formato JSON, citando somente números que aparecem no contexto "
    "ou na mensagem do usuário; se a informação não estiver no contexto, diga isso ou peça um humano (s=90)."
)


@dataclass(frozen=True)
class GroundingDecision:
    grounding: Grounding
    action: str  # deliver | retry | handoff
    correction: str = ""  # the corrective user message, for retry

    @property
    def detail(self) -> str:
        """The hand-off detail: how many numbers, never which."""
        return f"{len(self.grounding.unmatched)} cited number(s) not in what the turn delivered."


def delivered_texts(*, request, agent, user_texts: Iterable[str], ui_context: str) -> list[str]:
    """What a turn delivered to the model: package bodies and titles, the
    catalog's summaries, the agent's instructions, the UI context block and
    the user's own words (not the reply contract, not earlier answers)."""
    texts = [agent.system_prompt, ui_context, *user_texts]
    texts += [f"{k.title}\n{k.body}" for k in request.knowledge]
    texts.append(_catalog_text(request.catalog))
    return [t for t in texts if t]


_catalog_text_cache: tuple = (None, "")


def _catalog_text(catalog: tuple) -> str:
    """The whole catalog as one text, joined once per catalog (its items are one shared tuple per
    catalog version: conversations.prompts); the number extraction is cached by text."""
    global _catalog_text_cache
    cached_for, text = _catalog_text_cache
    if cached_for is not catalog:
        text = "\n".join(f"{c.title}\n{c.summary}" for c in catalog)
        _catalog_text_cache = (catalog, text)
    return text


def answer_grounding(
    *, policy: str, reply: str, delivered: Iterable[str], retried: bool, calls_left: int
) -> GroundingDecision:
    grounding = ground_reply(reply, delivered)
    if grounding.outcome != UNVERIFIED or policy == FLAG:
        return GroundingDecision(grounding, DELIVER)
    if policy == RETRY and not retried and calls_left > 0:
        numbers = ", ".join(dict.fromkeys(f'"{n.text}"' for n in grounding.unmatched))
        return GroundingDecision(grounding, RETRY, CORRECTION.format(numbers=numbers))
    return GroundingDecision(grounding, HANDOFF)


def with_correction(request, correction: tuple):
    """The request, followed by the answer being corrected and the correction (the grounding retry)."""
    if not correction:
        return request
    return dataclasses.replace(request, messages=request.messages + correction)


def grounding_record(grounding: Grounding | None) -> dict:
    """Count the turn by outcome; the JSON for the response and the message."""
    grounding = grounding or SKIPPED_GROUNDING
    TURN_GROUNDING.labels(outcome=grounding.outcome).inc()
    return grounding.as_json()
