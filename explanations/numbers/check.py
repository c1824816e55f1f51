"""`check_narrative(text, citable)`: every cited number must match a citable one.

Matching rules (kinds, signs, rounding) are documented in
docs/explanations.md, "Number checking rules".
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from explanations.numbers.extraction import extract_numbers
from explanations.numbers.types import ANY, CODE, CURRENCY, NUMBER, PERCENT, PERIOD, CitedNumber

# A number written with a scale word ("1,2 milhão", "R$ 3 mil") is read as
# rounded to the precision written, but never further than this from the
# citable value.
ROUNDING_MAX_RELATIVE_ERROR = Decimal("0.05")


@dataclass(frozen=True)
class CitableNumber:
    """A number the narrative may cite: its value and the exact pt-BR text
    the prompt listed ("R$ 1.234.567,89"). `label` says where it came from
    (e.g. "totals.simulado"); it is for people, never for matching."""

    value: Decimal
    kind: str
    text: str
    label: str = ""

    def values(self) -> frozenset[Decimal]:
        """The raw value plus the value its listed text stands for (the text
        may be rounded: 0.024537 is listed as "2,45%")."""
        shown = _values_written(self.text) if self.kind in (CURRENCY, PERCENT) else frozenset()
        return frozenset({Decimal(self.value), *shown})


@functools.lru_cache(maxsize=4096)
def _values_written(text: str) -> frozenset[Decimal]:
    return frozenset(c.value for c in extract_numbers(text))


@dataclass(frozen=True)
class NumberCheck:
    passed: bool
    cited: tuple[CitedNumber, ...]
    unmatched: tuple[CitedNumber, ...]


_COMPATIBLE = {
    PERCENT: {PERCENT, ANY},
    CURRENCY: {CURRENCY, NUMBER, ANY},
    NUMBER: {NUMBER, CURRENCY, CODE, PERIOD, ANY},
}


def _as_citable(item) -> CitableNumber:
    if isinstance(item, CitableNumber):
        return item
    value = Decimal(str(item)) if isinstance(item, float) else Decimal(item)
    return CitableNumber(value=value, kind=ANY, text=str(item))


def matches(cited: CitedNumber, citable: CitableNumber, values: frozenset[Decimal] | None = None) -> bool:
    if citable.kind not in _COMPATIBLE[cited.kind]:
        return False
    for value in citable.values() if values is None else values:
        # An unsigned citation matches either sign ("queda de 3,5%" for
        # -0.035): the sign is carried by words. A written minus must match.
        if cited.value < 0 and value >= 0:
            continue
        target, got = abs(value), abs(cited.value)
        if got == target:
            return True
        if cited.step is not None and target != 0:
            error = abs(got - target)
            if error * 2 <= cited.step and error <= target * ROUNDING_MAX_RELATIVE_ERROR:
                return True
    return False


def check_narrative(text: str, citable: Iterable[CitableNumber | Decimal | int | str]) -> NumberCheck:
    """Every number the text cites must match a citable number."""
    candidates = [(n, n.values()) for n in map(_as_citable, citable)]
    # Exact matches by absolute value first (one lookup); the full scan is
    # only for rounded citations and misses.
    by_value: dict[Decimal, list] = {}
    for n, values in candidates:
        for value in values:
            by_value.setdefault(abs(value), []).append((n, values))
    cited = tuple(extract_numbers(text))

    def matched(c: CitedNumber) -> bool:
        if any(matches(c, n, values) for n, values in by_value.get(abs(c.value), ())):
            return True
        return c.step is not None and any(matches(c, n, values) for n, values in candidates)

    unmatched = tuple(c for c in cited if not matched(c))
    return NumberCheck(passed=not unmatched, cited=cited, unmatched=unmatched)
