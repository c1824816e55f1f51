"""Grounding of agent replies: every number an agent's answer cites must be
in what its turn delivered (package bodies and summaries, the UI context's
visible values, the user's own words) or be trivially safe.

Pure Python, the same extraction as the narrative check. It is imported by
the conversations app (a higher floor); it imports nothing from it.

Matching is by value, exactly (no rounding: a reply that rounds a price is
not quoting it), with kinds that may not contradict each other: a number
written plain in the context may be cited with a unit and the reverse ("120"
in a form field, "R$ 120,00" in the reply), but money never matches a
percentage, a month never matches a count, and so on (`compatible`).
Trivially safe: markdown list numbering (never extracted) and small ordinals
written with digits ("1º passo"), which order the answer rather than state a
fact. Years of dates the context shows are in the context, so they match.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from explanations.numbers.check import compatible
from explanations.numbers.extraction import extract_numbers
from explanations.numbers.types import NUMBER, UNGROUNDED, CitedNumber

VERIFIED = "verified"
UNVERIFIED = "unverified"
SKIPPED = "skipped"
OUTCOMES = (VERIFIED, UNVERIFIED, SKIPPED)
_SAFE_ORDINAL_MAX = Decimal(10)


@dataclass(frozen=True)
class Grounding:
    outcome: str
    unmatched: tuple[CitedNumber, ...] = ()
    cited: int = 0

    def as_json(self) -> dict:
        """For the turn response and the stored message: texts and reasons only."""
        return {"outcome": self.outcome, "unmatched": [{"text": n.text, "reason": n.reason} for n in self.unmatched]}


SKIPPED_GROUNDING = Grounding(SKIPPED)


def _agrees(cited: CitedNumber, given: CitedNumber) -> bool:
    if abs(cited.value) != abs(given.value) or (cited.value < 0 and given.value >= 0):
        return False
    if NUMBER in (cited.kind, given.kind) and not (cited.kind == NUMBER and given.kind == NUMBER):
        # One side has no unit: fine unless the other is a kind a plain number never stands for.
        other = given.kind if cited.kind == NUMBER else cited.kind
        return compatible(NUMBER, other) or compatible(other, NUMBER)
    return compatible(cited.kind, given.kind)


def _trivially_safe(cited: CitedNumber) -> bool:
    return cited.text[-1:] in "ºª°" and cited.value <= _SAFE_ORDINAL_MAX


@functools.lru_cache(maxsize=1024)
def _numbers_in(text: str) -> tuple[CitedNumber, ...]:
    # Package bodies and summaries repeat from turn to turn: read each text once.
    return tuple(extract_numbers(text))


def ground_reply(reply: str, sources: Iterable[str]) -> Grounding:
    """Check `reply` against the texts the turn delivered."""
    cited = [c for c in extract_numbers(reply) if not _trivially_safe(c)]
    if not cited:
        return Grounding(VERIFIED)
    given: dict[Decimal, list[CitedNumber]] = {}
    for text in sources:
        if text:
            for number in _numbers_in(text):
                given.setdefault(abs(number.value), []).append(number)
    unmatched = tuple(
        CitedNumber(c.value, c.kind, c.start, c.end, c.text, reason=UNGROUNDED)
        for c in cited
        if not any(_agrees(c, g) for g in given.get(abs(c.value), ()))
    )
    return Grounding(UNVERIFIED if unmatched else VERIFIED, unmatched, len(cited))
