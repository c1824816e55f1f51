"""Prometheus metrics of agent turns (served by /metrics with the rest)."""

from prometheus_client import Counter

TURN_GROUNDING = Counter(
    "contexto_turn_grounding",
    "Turns by the grounding of the answer's numbers (verified, unverified, skipped: no agent answer).",
    ["outcome"],
)
