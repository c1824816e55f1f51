"""Kinds of numbers and what extraction returns."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

NUMBER = "number"
CURRENCY = "currency"
PERCENT = "percent"
# Kinds only a citable number has: a breakdown key such as a store code, and
# the year or month of a period. A cited plain number may match them.
CODE = "code"
PERIOD = "period"
ANY = "any"


@dataclass(frozen=True)
class CitedNumber:
    """A number found in a text. `value` is signed only when a sign was
    written ("-3,5%", "menos doze"); a percentage is its fraction (0.0245).
    `step` is the rounding step when the number was written with a scale
    word ("1,2 milhão" -> 100000), else None (exact)."""

    value: Decimal
    kind: str
    start: int
    end: int
    text: str
    step: Decimal | None = None
