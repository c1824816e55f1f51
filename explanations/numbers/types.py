"""Kinds of numbers and what extraction returns.

A kind is what a number means, read from its surface in a text ("R$",
"por cento", "lojas", "maio") or declared for a fact (`units`). A cited
number matches a citable one only when the value is the same *and* the
kinds are compatible (`check.compatible`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

NUMBER = "number"  # a plain number: no unit written
CURRENCY = "currency"  # money in BRL (the default currency)
CURRENCY_USD = "currency:USD"
CURRENCY_EUR = "currency:EUR"
PERCENT = "percent"  # a fraction: "2,45%" is 0.0245
PERCENTAGE_POINTS = "percentage_points"  # a difference of two percentages, as a fraction: "1,5 p.p." is 0.015
COUNT = "count"  # how many of something: "5 lojas"
CODE = "code"  # an identifier that is a number: a breakdown key ("loja 0423")
# Periods. PERIOD is the generic kind of a citable month or year given
# without saying which (kept for callers that built CitableNumber by hand).
PERIOD = "period"
MONTH = "period:month"
YEAR = "period:year"
QUARTER = "period:quarter"
SEMESTER = "period:semester"
TIME = "time"  # a time of day: "14h" is 14, "14h30" is 14.5
PROPORTION = "proportion"  # a fraction in words or digits: "metade", "um quarto", "três quartos", "1/3"
ANY = "any"  # a citable value of unknown kind (a bare value handed to the checker)

CURRENCIES = {"BRL": CURRENCY, "USD": CURRENCY_USD, "EUR": CURRENCY_EUR}
UNIT_KINDS = (CURRENCY, CURRENCY_USD, CURRENCY_EUR, PERCENT, PERCENTAGE_POINTS, COUNT, NUMBER, CODE)

# Why a cited number failed the check (shown to auditors).
NOT_IN_LIST = "not_in_list"
WRONG_KIND = "wrong_kind"
WRONG_ENTITY = "wrong_entity"
WRONG_DIRECTION = "wrong_direction"
ROUNDED = "rounded"
PII = "pii"
UNGROUNDED = "not_in_context"  # agent turns: not in what the turn delivered
REASONS = (NOT_IN_LIST, WRONG_KIND, WRONG_ENTITY, WRONG_DIRECTION, ROUNDED, PII)


def is_currency(kind: str) -> bool:
    return kind == CURRENCY or kind.startswith("currency:")


@dataclass(frozen=True)
class CitedNumber:
    """A number found in a text. `value` is signed only when a sign was
    written ("-3,5%", "menos doze"); a percentage is its fraction (0.0245).
    `step` is the rounding step when the number was written with a scale
    word ("1,2 milhão" -> 100000), else None (exact). `precision` is the
    unit of the last digit written ("1.234,5" -> 0.1), used to tell a
    rounded citation from an invented one. `noun` is the thing counted or
    coded ("lojas", "loja"). `reason` is set on unmatched numbers."""

    value: Decimal
    kind: str
    start: int
    end: int
    text: str
    step: Decimal | None = None
    precision: Decimal | None = None
    noun: str = ""
    reason: str = ""
