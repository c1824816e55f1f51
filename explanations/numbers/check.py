"""`check_narrative(text, citable)`: every cited number must match a citable one.

A match needs the same value and a compatible kind (`compatible`); with a
`Meaning` (the facts' entities and the signs of their differences) a match
must also be said of the right entity and in the right direction
(`explanations.numbers.meaning`). Rules are documented in
docs/explanations.md, "Number checking rules".
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from explanations.numbers.extraction import extract_numbers
from explanations.numbers.types import (
    ANY,
    CODE,
    COUNT,
    MONTH,
    NOT_IN_LIST,
    NUMBER,
    PERCENT,
    PERCENTAGE_POINTS,
    PERIOD,
    PII,
    PROPORTION,
    QUARTER,
    ROUNDED,
    SEMESTER,
    TIME,
    WRONG_KIND,
    YEAR,
    CitedNumber,
    is_currency,
)

# A number written with a scale word ("1,2 milhão", "R$ 3 mil") is read as
# rounded to the precision written, but never further than this from the
# citable value. Only under `rounding="scale"`; the default is exact.
ROUNDING_MAX_RELATIVE_ERROR = Decimal("0.05")
EXACT = "exact"
SCALE = "scale"
ROUNDING_RULES = (EXACT, SCALE)


@dataclass(frozen=True)
class CitableNumber:
    """A number the narrative may cite: its value and the exact pt-BR text
    the prompt listed ("R$ 1.234.567,89"). `label` says where it came from
    (e.g. "totais.simulado"), for people. `entity` is the fact it belongs
    to ("budget", "totals.simulado", "filial.Centro"), for attribution."""

    value: Decimal
    kind: str
    text: str
    label: str = ""
    entity: str = ""

    @functools.cached_property  # noqa: B019 - frozen: computed once per citable number
    def _values(self) -> frozenset[Decimal]:
        return self._compute_values()

    def values(self) -> frozenset[Decimal]:
        return self._values

    def _compute_values(self) -> frozenset[Decimal]:
        """The raw value plus the value its listed text stands for (the text
        may be rounded: 0.024537 is listed as "2,45%")."""
        value = Decimal(self.value)
        shown = _values_written(self.text) if (is_currency(self.kind) or self.kind in _WRITTEN) else frozenset()
        if self.kind == PERCENTAGE_POINTS:
            # Points may be sent as a fraction (0.015) or as points (1.5).
            return frozenset({value, value / 100, *shown})
        return frozenset({value, *shown})


_WRITTEN = (PERCENT, PERCENTAGE_POINTS)


@functools.lru_cache(maxsize=4096)
def _values_written(text: str) -> frozenset[Decimal]:
    return frozenset(c.value for c in extract_numbers(text))


@dataclass(frozen=True)
class NumberCheck:
    passed: bool
    cited: tuple[CitedNumber, ...]
    unmatched: tuple[CitedNumber, ...]  # each with its `reason`
    rounding: str = EXACT


_PLAIN_TARGETS = frozenset({NUMBER, COUNT, CODE, PERIOD, MONTH, YEAR, TIME, ANY})
_COMPATIBLE = {
    NUMBER: _PLAIN_TARGETS,
    PERCENT: frozenset({PERCENT, ANY}),
    PERCENTAGE_POINTS: frozenset({PERCENTAGE_POINTS, ANY}),
    COUNT: frozenset({COUNT, NUMBER, ANY}),
    CODE: frozenset({CODE, ANY}),
    MONTH: frozenset({MONTH, PERIOD, ANY}),
    YEAR: frozenset({YEAR, PERIOD, NUMBER, ANY}),
    QUARTER: frozenset({QUARTER, ANY}),
    SEMESTER: frozenset({SEMESTER, ANY}),
    TIME: frozenset({TIME, NUMBER, ANY}),
    # "um quarto" may stand for a share given as a fraction (25%) or a plain 0.25.
    PROPORTION: frozenset({PERCENT, NUMBER, ANY}),
}


def compatible(cited_kind: str, citable_kind: str) -> bool:
    """Whether a number written as `cited_kind` may stand for a fact of
    `citable_kind`: money only for money in the same currency, a count
    for a count or a plain number, a month for a month…; a plain number
    for anything but money in another unit, percentages and periods
    other than month and year."""
    if is_currency(cited_kind):
        return citable_kind in (cited_kind, ANY)
    if cited_kind == NUMBER and is_currency(citable_kind):
        return True
    return citable_kind in _COMPATIBLE.get(cited_kind, (ANY,))


def _as_citable(item) -> CitableNumber:
    if isinstance(item, CitableNumber):
        return item
    value = Decimal(str(item)) if isinstance(item, float) else Decimal(item)
    return CitableNumber(value=value, kind=ANY, text=str(item))


def _same_value(cited: CitedNumber, value: Decimal) -> bool:
    # An unsigned citation matches either sign ("queda de 3,5%" for
    # -0.035): the sign is carried by words. A written minus must match.
    if cited.value < 0 and value >= 0:
        return False
    return abs(cited.value) == abs(value)


def _within(cited: CitedNumber, value: Decimal, step: Decimal | None) -> bool:
    if step is None or value == 0 or (cited.value < 0 and value >= 0):
        return False
    target, error = abs(value), abs(abs(cited.value) - abs(value))
    return error * 2 <= step and error <= target * ROUNDING_MAX_RELATIVE_ERROR


def matches(
    cited: CitedNumber, citable: CitableNumber, values: frozenset[Decimal] | None = None, *, rounding: str = EXACT
) -> bool:
    if not compatible(cited.kind, citable.kind):
        return False
    for value in citable.values() if values is None else values:
        if _same_value(cited, value):
            return True
        if rounding == SCALE and _within(cited, value, cited.step):
            return True
    return False


def _reason(cited: CitedNumber, candidates, pii_values: frozenset[Decimal]) -> str:
    if abs(cited.value) in pii_values:
        return PII
    if any(_same_value(cited, v) for _, values in candidates for v in values):
        return WRONG_KIND
    precision = max(cited.step or 0, cited.precision or 0)
    if precision and any(
        compatible(cited.kind, n.kind) and _within(cited, v, precision) for n, values in candidates for v in values
    ):
        return ROUNDED
    return NOT_IN_LIST


def check_narrative(
    text: str,
    citable: Iterable[CitableNumber | Decimal | int | str],
    *,
    rounding: str = EXACT,
    meaning=None,
) -> NumberCheck:
    """Every number the text cites must match a citable number (value and
    kind); with `meaning`, also its entity and direction."""
    candidates = [(n, n.values()) for n in map(_as_citable, citable)]
    # Exact matches by absolute value first (one lookup); the full scan is
    # only for rounded citations and misses.
    by_value: dict[Decimal, list] = {}
    for n, values in candidates:
        for value in values:
            by_value.setdefault(abs(value), []).append((n, values))
    cited = tuple(extract_numbers(text))
    pii_values = meaning.pii_values if meaning is not None else frozenset()

    matched: dict[int, list[CitableNumber]] = {}
    unmatched: list[CitedNumber] = []
    for index, c in enumerate(cited):
        pool = by_value.get(abs(c.value), ())
        if rounding == SCALE and c.step is not None:
            pool = candidates
        found = [n for n, values in pool if matches(c, n, values, rounding=rounding)]
        if found:
            matched[index] = found
        else:
            unmatched.append(dataclasses.replace(c, reason=_reason(c, candidates, pii_values)))
    if meaning is not None:
        from explanations.numbers.meaning import judge

        kinds_of: dict[str, set[str]] = {}
        for n, _ in candidates:
            if n.entity:
                kinds_of.setdefault(n.entity, set()).add(n.kind)
        seen = {(c.start, c.end) for c in unmatched}
        for c in judge(text, cited, matched, meaning, kinds_of):
            if (c.start, c.end) not in seen:  # one reason per number: the first found
                seen.add((c.start, c.end))
                unmatched.append(c)
        unmatched.sort(key=lambda c: c.start)
    return NumberCheck(passed=not unmatched, cited=cited, unmatched=tuple(unmatched), rounding=rounding)
