"""Find the numbers a Portuguese (pt-BR) text cites, and check them.

Public API: `extract_numbers(text)` and `check_narrative(text, citable)`.
Pure Python, no Django: it is the part of the explanation step that decides
whether a narrative may be shown, so it is small, fast and exhaustively
tested. The decisions on hard cases are documented in docs/explanations.md
("Number checking rules"); the short version is in the comments below.

Why not text2num's `alpha2digit`: it rewrites the text and loses the
offsets (an auditor needs them to highlight an unmatched number), it turns
"vinte e três por cento" into "23 por 100", and it does not read money in
words ("dois reais e cinquenta centavos"). The word grammar here is small
(numbers below one trillion, as num2words writes them) and is property
tested against num2words.
"""

from explanations.numbers.check import (
    ROUNDING_MAX_RELATIVE_ERROR,
    ROUNDING_RULES,
    CitableNumber,
    NumberCheck,
    check_narrative,
    compatible,
    matches,
)
from explanations.numbers.extraction import extract_numbers
from explanations.numbers.types import (
    ANY,
    CODE,
    COUNT,
    CURRENCY,
    CURRENCY_EUR,
    CURRENCY_USD,
    MONTH,
    NUMBER,
    PERCENT,
    PERCENTAGE_POINTS,
    PERIOD,
    PROPORTION,
    QUARTER,
    REASONS,
    SEMESTER,
    TIME,
    YEAR,
    CitedNumber,
)

__all__ = [
    "ANY",
    "CODE",
    "COUNT",
    "CURRENCY",
    "CURRENCY_EUR",
    "CURRENCY_USD",
    "MONTH",
    "NUMBER",
    "PERCENT",
    "PERCENTAGE_POINTS",
    "PERIOD",
    "PROPORTION",
    "QUARTER",
    "REASONS",
    "ROUNDING_MAX_RELATIVE_ERROR",
    "ROUNDING_RULES",
    "SEMESTER",
    "TIME",
    "YEAR",
    "CitableNumber",
    "CitedNumber",
    "NumberCheck",
    "check_narrative",
    "compatible",
    "extract_numbers",
    "matches",
]
