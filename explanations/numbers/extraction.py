"""`extract_numbers(text)`: every number a pt-BR text cites, with offsets.

A tokenizer (identifiers and list markers masked first) feeds a small
recursive-descent parser over digits, number words, scales, signs and
units. Each `_Parser` method takes a token index and returns what it read
and the next index, or None; it never consumes a token it cannot use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from common.text import fold_lower
from explanations.numbers.types import CURRENCY, NUMBER, PERCENT, CitedNumber
from explanations.numbers.vocabulary import (
    DIGIT_SCALES,
    GLUED_SCALES,
    HUNDREDS,
    MONTH_ABBREVIATIONS,
    MONTHS,
    NOT_A_SIGN_AFTER,
    ORDINAL_MARKS,
    PROPORTIONS,
    SCALES,
    TENS,
    UNITS,
)

# --------------------------------------------------------------------------
# Tokens

_TOKEN_RE = re.compile(
    r"(?P<cur>R\$)"
    r"|(?P<num>\d{1,3}(?:\.\d{3})+(?!\d)(?:,\d+)?|\d+\.\d+|\d+(?:,\d+)?)"
    r"|(?P<word>[^\W\d_]+)"
    r"|(?P<sym>\S)"
)
# Letters and digits glued together (optionally through - or _) form an
# identifier: "T-317", "L0423", "sim-2026-03-001", "14h30". Its digits are
# not a cited number. Exceptions: ordinals ("2º") and glued scales ("5mil").
_IDENTIFIER_RE = re.compile(r"\w(?:[\w-]*\w)?")
_DIGIT_RE = re.compile(r"\d")
_LETTER_RE = re.compile(r"[^\W\d_]")
_GLUED_OK_RE = re.compile(r"\d+(?:[ºª]|mil|mi|bi|tri|x|k|mm|m)", re.IGNORECASE)
# "mar/2026", "jan/26": a month abbreviation is only a month before a year.
_MONTH_ABBREVIATION_RE = re.compile(
    rf"(?<!\w)(?P<month>{MONTH_ABBREVIATIONS})/(?P<year>\d{{4}}|\d{{2}})(?!\w)", re.IGNORECASE
)
# Markdown list markers ("1. ", "2) ") at the start of a line are layout.
_LIST_MARKER_RE = re.compile(r"(?m)^[ \t]*\d{1,2}[.)](?=[ \t])")


@dataclass(frozen=True)
class _Token:
    type: str  # cur | num | word | sym
    text: str
    start: int
    end: int

    @property
    def fold(self) -> str:
        return fold_lower(self.text)


def _tokenize(text: str, masked: list[tuple[int, int]]) -> list[_Token]:
    hidden = bytearray(len(text))  # 1 where a masked span covers the text
    for a, b in masked:
        hidden[a:b] = b"\x01" * (b - a)
    return [
        _Token(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN_RE.finditer(text) if not hidden[m.start()]
    ]


def _masked_spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in _LIST_MARKER_RE.finditer(text)]
    spans += [m.span() for m in _MONTH_ABBREVIATION_RE.finditer(text)]
    for m in _IDENTIFIER_RE.finditer(text):
        run = m.group()
        if _DIGIT_RE.search(run) and _LETTER_RE.search(run) and not _GLUED_OK_RE.fullmatch(run):
            spans.append(m.span())
    return spans


def _digits_value(text: str) -> tuple[Decimal, int]:
    """'1.234,56' -> (1234.56, 2 decimals); '1.5' (English) -> (1.5, 1)."""
    if "," in text:
        integer, fraction = text.replace(".", "").split(",")
        return Decimal(f"{integer}.{fraction}"), len(fraction)
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", text):
        return Decimal(text.replace(".", "")), 0
    if "." in text:
        return Decimal(text), len(text.split(".")[1])
    return Decimal(text), 0


# --------------------------------------------------------------------------
# Parser over tokens


class _Parser:
    def __init__(self, text: str, tokens: list[_Token]):
        self.text = text
        self.t = tokens

    def fold(self, i: int) -> str | None:
        return self.t[i].fold if i < len(self.t) and self.t[i].type == "word" else None

    def is_conj(self, i: int) -> bool:
        # Raw "e" only: folding would turn the verb "é" into "e".
        return i < len(self.t) and self.t[i].type == "word" and self.t[i].text.lower() == "e"

    def is_sym(self, i: int, chars: str) -> bool:
        return i < len(self.t) and self.t[i].type == "sym" and self.t[i].text in chars

    def glued(self, i: int, j: int) -> bool:
        return j < len(self.t) and self.t[i].end == self.t[j].start

    # ---- words below one thousand

    def small(self, i: int) -> tuple[int, int] | None:
        w = self.fold(i)
        if w == "cem":
            return 100, i + 1
        if w in HUNDREDS:
            if self.is_conj(i + 1) and (rest := self.tens_units(i + 2)):
                return HUNDREDS[w] + rest[0], rest[1]
            return None if w == "cento" else (HUNDREDS[w], i + 1)
        return self.tens_units(i)

    def tens_units(self, i: int) -> tuple[int, int] | None:
        w = self.fold(i)
        if w in TENS:
            unit = self.fold(i + 2) if self.is_conj(i + 1) else None
            if unit in UNITS and 1 <= UNITS[unit] <= 9:
                return TENS[w] + UNITS[unit], i + 3
            return TENS[w], i + 1
        if w in UNITS:
            return UNITS[w], i + 1
        return None

    # ---- whole numbers in words, below one quadrillion

    def group(self, i: int) -> tuple[int, int, int] | None:
        """One group: "duzentos e trinta e quatro mil" -> (234, 1000, next)."""
        if self.fold(i) in ("meio", "meia") and (half := SCALES.get(self.fold(i + 1), 0)) >= 10**6:
            return 1, half // 2, i + 2  # "meio milhão": half of the scale ("meio" alone is prose)
        s = self.small(i)
        value, j = s if s else (None, i)
        scale = SCALES.get(self.fold(j))
        if scale:
            if value is None and scale != 1000:  # "milhão" needs "um"
                return None
            return (1 if value is None else value), scale, j + 1
        if value is None:
            return None
        return value, 1, j

    def word_integer(self, i: int) -> tuple[int, int, int | None] | None:
        """(value, next, step); step is the scale of the last group when it
        has one ("um milhão e duzentos mil" -> 1000), else None."""
        first = self.group(i)
        if not first:
            return None
        value, scale, j = first
        total, last_scale = value * scale, scale
        while last_scale > 1:
            if self.is_conj(j) and self.fold(j + 1) in ("meio", "meia"):
                return total + last_scale // 2, j + 2, last_scale // 2
            if not (self.is_conj(j) or self.is_sym(j, ",")):
                break
            nxt = self.group(j + 1)
            if not nxt or nxt[0] * nxt[1] >= last_scale or nxt[1] >= last_scale:
                break
            value, scale, j = nxt
            total += value * scale
            last_scale = scale
        return total, j, (last_scale if last_scale > 1 else None)

    def word_fraction(self, i: int) -> tuple[str, int] | None:
        """Digits after "vírgula": "zero cinco" -> "05", "quarenta e cinco" -> "45"."""
        digits, j = "", i
        while (s := self.small(j)) and SCALES.get(self.fold(s[1])) is None:
            digits += str(s[0])
            j = s[1]
        return (digits, j) if digits else None

    # ---- one quantity, with sign, currency, scale and unit

    def quantity(self, i: int) -> tuple[CitedNumber, int] | None:
        start_i, j = i, i
        negative = currency = False
        # A minus glued to the number, not to a word or number before it ("2026-03").
        minus_sign = (
            self.is_sym(j, "-−")
            and self.glued(j, j + 1)
            and not (j > 0 and self.glued(j - 1, j) and self.t[j - 1].type in ("num", "word"))
        )
        menos = self.fold(j) == "menos" and not (j > 0 and self.fold(j - 1) in NOT_A_SIGN_AFTER)
        if minus_sign or menos:
            negative, j = True, j + 1
        if j < len(self.t) and self.t[j].type == "cur":
            currency, j = True, j + 1
            if not negative and self.is_sym(j, "-−") and self.glued(j, j + 1):
                negative, j = True, j + 1
        core = self.digits_quantity(j) or self.words_quantity(j)
        if core is None:
            return None
        value, step, j, ordinal, lone_article = core
        if ordinal:
            return self.make(start_i, j, value, NUMBER, None, negative), j
        kind = CURRENCY if currency else NUMBER
        unit = self.unit(j, step)
        if unit:
            kind, j, divisor = unit
            value = value / divisor
            if step is not None:
                step = step / divisor
        elif lone_article and not (currency or negative):
            return None  # "um aumento": the article, not the number one
        if kind == CURRENCY and (cents := self.cents(j, value)):
            (value, j), step = cents, None  # cents written: an exact amount
        return self.make(start_i, j, value, kind, step, negative), j

    def make(self, i: int, j: int, value, kind, step, negative) -> CitedNumber:
        start, end = self.t[i].start, self.t[j - 1].end
        value = Decimal(value)
        return CitedNumber(-value if negative else value, kind, start, end, self.text[start:end], step)

    def digits_quantity(self, j: int):
        if j >= len(self.t) or self.t[j].type != "num":
            return None
        value, decimals = _digits_value(self.t[j].text)
        k = j + 1
        nxt = self.t[k] if k < len(self.t) else None
        if nxt and self.glued(j, k) and (nxt.text in ORDINAL_MARKS):
            return value, None, k + 1, True, False
        scale = DIGIT_SCALES.get(self.fold(k)) or (GLUED_SCALES.get(self.fold(k)) if self.glued(j, k) else None)
        step = None
        if scale:
            value, step, k = value * scale, Decimal(1).scaleb(-decimals) * scale, k + 1
            value, k, step = self.scaled_tail(k, value, scale, step)
        return value, step, k, False, False

    def scaled_tail(self, k: int, value: Decimal, scale: int, step):
        """ "1 milhão e 200 mil", "3 mil e quinhentos", "2 milhões e meio"."""
        if not self.is_conj(k):
            return value, k, step
        if self.fold(k + 1) in ("meio", "meia"):
            return value + Decimal(scale) / 2, k + 2, Decimal(scale) / 2
        nxt = self.t[k + 1] if k + 1 < len(self.t) else None
        if nxt and nxt.type == "num":
            inner, decimals = _digits_value(nxt.text)
            sub = DIGIT_SCALES.get(self.fold(k + 2))
            if sub and sub < scale and inner * sub < scale:
                return value + inner * sub, k + 3, Decimal(1).scaleb(-decimals) * sub
            return value, k, step
        words = self.word_integer(k + 1)
        if words and words[0] < scale:
            return value + words[0], words[1], (Decimal(words[2]) if words[2] else None)
        return value, k, step

    def words_quantity(self, j: int):
        if self.fold(j) in ("meio", "meia") and self.unit(j + 1, None) and self.unit(j + 1, None)[0] == PERCENT:
            return Decimal("0.5"), None, j + 1, False, False  # "meio por cento"
        parsed = self.word_integer(j)
        if not parsed:
            return None
        integer, k, step = parsed
        value = Decimal(integer)
        lone_article = k == j + 1 and self.fold(j) in ("um", "uma")
        if self.fold(k) == "virgula" and (fraction := self.word_fraction(k + 1)):
            value = Decimal(f"{integer}.{fraction[0]}")
            k, step, lone_article = fraction[1], None, False
        return value, (Decimal(step) if step else None), k, False, lone_article

    def unit(self, k: int, step) -> tuple[str, int, int] | None:
        """A unit after the number: (kind, next index, divisor)."""
        w = self.fold(k)
        if self.is_sym(k, "%") or w == "porcento":
            return PERCENT, k + 1, 100
        if w == "por" and self.fold(k + 1) == "cento":
            return PERCENT, k + 2, 100
        if w in ("ponto", "pontos") and self.fold(k + 1) in ("percentual", "percentuais"):
            return PERCENT, k + 2, 100
        if w == "pp":
            return PERCENT, k + 1, 100
        if w == "p" and self.is_sym(k + 1, ".") and self.fold(k + 2) == "p":
            end = k + 4 if self.is_sym(k + 3, ".") and self.glued(k + 2, k + 3) else k + 3
            return PERCENT, end, 100
        if w in ("real", "reais"):
            return CURRENCY, k + 1, 1
        if w == "de" and step is not None and self.fold(k + 1) in ("real", "reais"):
            return CURRENCY, k + 2, 1
        if w in ("centavo", "centavos"):
            return CURRENCY, k + 1, 100
        return None

    def cents(self, k: int, value: Decimal):
        """ "... reais e cinquenta centavos"."""
        if not self.is_conj(k) or self.t[k - 1].fold not in ("real", "reais"):
            return None
        if k + 1 < len(self.t) and self.t[k + 1].type == "num":
            amount, end = _digits_value(self.t[k + 1].text)[0], k + 2
        else:
            parsed = self.word_integer(k + 1)
            if not parsed:
                return None
            amount, end = Decimal(parsed[0]), parsed[1]
        if self.fold(end) not in ("centavo", "centavos") or amount >= 100:
            return None
        return value + amount / 100, end + 1

    def month_or_proportion(self, i: int) -> CitedNumber | None:
        tok = self.t[i]
        if tok.type != "word":
            return None
        if tok.text.lower() in MONTHS:
            return CitedNumber(Decimal(MONTHS[tok.text.lower()]), NUMBER, tok.start, tok.end, tok.text)
        if tok.fold in PROPORTIONS:
            return CitedNumber(PROPORTIONS[tok.fold], NUMBER, tok.start, tok.end, tok.text)
        return None


def _abbreviated_months(text: str) -> list[CitedNumber]:
    found = []
    months = {m: n for n, m in enumerate(MONTH_ABBREVIATIONS.split("|"), start=1)}
    for m in _MONTH_ABBREVIATION_RE.finditer(text):
        year = m.group("year")
        year_value = Decimal(year) + (2000 if len(year) == 2 else 0)
        found.append(CitedNumber(Decimal(months[m.group("month").lower()]), NUMBER, *m.span("month"), m.group("month")))
        found.append(CitedNumber(year_value, NUMBER, *m.span("year"), year))
    return found


def extract_numbers(text: str) -> list[CitedNumber]:
    """Every number cited in `text`, in order of appearance."""
    tokens = _tokenize(text, _masked_spans(text))
    parser = _Parser(text, tokens)
    found = _abbreviated_months(text)
    i = 0
    while i < len(tokens):
        quantity = parser.quantity(i)
        if quantity:
            found.append(quantity[0])
            i = quantity[1]
            continue
        word = parser.month_or_proportion(i)
        if word:
            found.append(word)
        i += 1
    return sorted(found, key=lambda c: c.start)
