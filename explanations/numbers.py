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

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
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

# A number written with a scale word ("1,2 milhão", "R$ 3 mil") is read as
# rounded to the precision written, but never further than this from the
# citable value.
ROUNDING_MAX_RELATIVE_ERROR = Decimal("0.05")


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


# --------------------------------------------------------------------------
# Vocabulary (keys are lower case without accents)

_UNITS = {
    "zero": 0, "um": 1, "uma": 1, "dois": 2, "duas": 2, "tres": 3, "quatro": 4,
    "cinco": 5, "seis": 6, "sete": 7, "oito": 8, "nove": 9, "dez": 10, "onze": 11,
    "doze": 12, "treze": 13, "catorze": 14, "quatorze": 14, "quinze": 15,
    "dezesseis": 16, "dezasseis": 16, "dezessete": 17, "dezassete": 17,
    "dezoito": 18, "dezenove": 19, "dezanove": 19,
}  # fmt: skip
_TENS = {
    "vinte": 20, "trinta": 30, "quarenta": 40, "cinquenta": 50, "sessenta": 60,
    "setenta": 70, "oitenta": 80, "noventa": 90,
}  # fmt: skip
_HUNDREDS = {
    "cento": 100, "duzentos": 200, "duzentas": 200, "trezentos": 300, "trezentas": 300,
    "quatrocentos": 400, "quatrocentas": 400, "quinhentos": 500, "quinhentas": 500,
    "seiscentos": 600, "seiscentas": 600, "setecentos": 700, "setecentas": 700,
    "oitocentos": 800, "oitocentas": 800, "novecentos": 900, "novecentas": 900,
}  # fmt: skip
_SCALES = {
    "mil": 10**3, "milhao": 10**6, "milhoes": 10**6, "bilhao": 10**9,
    "bilhoes": 10**9, "trilhao": 10**12, "trilhoes": 10**12,
}  # fmt: skip
# Abbreviations (Babel's compact format writes "R$ 1,2 mi") follow digits only.
_DIGIT_SCALES = {**_SCALES, "mi": 10**6, "bi": 10**9, "tri": 10**12}
_MONTHS = {
    "janeiro": 1, "fevereiro": 2, "março": 3, "abril": 4, "maio": 5, "junho": 6,
    "julho": 7, "agosto": 8, "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12,
}  # fmt: skip
_MONTH_ABBREVIATIONS = "jan|fev|mar|abr|mai|jun|jul|ago|set|out|nov|dez"
# Proportions in words are arithmetic the model did ("metade da diferença",
# "o dobro"): they are extracted so that, unless given, they fail the check.
_PROPORTIONS = {
    "metade": Decimal("0.5"), "terco": Decimal(1) / 3, "tercos": Decimal(2) / 3,
    "dobro": Decimal(2), "triplo": Decimal(3), "quadruplo": Decimal(4),
}  # fmt: skip
# "pelo menos três" is "at least three", not minus three.
_NOT_A_SIGN_AFTER = {"pelo", "ao", "no", "mais", "a", "o", "de", "em", "bem"}
_ORDINAL_MARKS = {"º", "ª", "°"}

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
_GLUED_OK_RE = re.compile(r"\d+(?:[ºª]|mil|mi|bi|tri|x)", re.IGNORECASE)
# "mar/2026", "jan/26": a month abbreviation is only a month before a year.
_MONTH_ABBREVIATION_RE = re.compile(
    rf"(?<!\w)(?P<month>{_MONTH_ABBREVIATIONS})/(?P<year>\d{{4}}|\d{{2}})(?!\w)", re.IGNORECASE
)
# Markdown list markers ("1. ", "2) ") at the start of a line are layout.
_LIST_MARKER_RE = re.compile(r"(?m)^[ \t]*\d{1,2}[.)](?=[ \t])")


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True)
class _Token:
    type: str  # cur | num | word | sym
    text: str
    start: int
    end: int

    @property
    def fold(self) -> str:
        return _fold(self.text)


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
# Parser over tokens. Each `_parse_*` takes an index and returns
# (value, next index) or None; it never consumes a token it cannot use.


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
        if w in _HUNDREDS:
            if self.is_conj(i + 1) and (rest := self.tens_units(i + 2)):
                return _HUNDREDS[w] + rest[0], rest[1]
            return None if w == "cento" else (_HUNDREDS[w], i + 1)
        return self.tens_units(i)

    def tens_units(self, i: int) -> tuple[int, int] | None:
        w = self.fold(i)
        if w in _TENS:
            unit = self.fold(i + 2) if self.is_conj(i + 1) else None
            if unit in _UNITS and 1 <= _UNITS[unit] <= 9:
                return _TENS[w] + _UNITS[unit], i + 3
            return _TENS[w], i + 1
        if w in _UNITS:
            return _UNITS[w], i + 1
        return None

    # ---- whole numbers in words, below one quadrillion

    def group(self, i: int) -> tuple[int, int, int] | None:
        """One group: "duzentos e trinta e quatro mil" -> (234, 1000, next)."""
        s = self.small(i)
        value, j = s if s else (None, i)
        scale = _SCALES.get(self.fold(j))
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
        while (s := self.small(j)) and _SCALES.get(self.fold(s[1])) is None:
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
        menos = self.fold(j) == "menos" and not (j > 0 and self.fold(j - 1) in _NOT_A_SIGN_AFTER)
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
        if nxt and self.glued(j, k) and (nxt.text in _ORDINAL_MARKS):
            return value, None, k + 1, True, False
        scale = _DIGIT_SCALES.get(self.fold(k))
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
            sub = _DIGIT_SCALES.get(self.fold(k + 2))
            if sub and sub < scale and inner * sub < scale:
                return value + inner * sub, k + 3, Decimal(1).scaleb(-decimals) * sub
            return value, k, step
        words = self.word_integer(k + 1)
        if words and words[0] < scale:
            return value + words[0], words[1], (Decimal(words[2]) if words[2] else None)
        return value, k, step

    def words_quantity(self, j: int):
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
        if tok.text.lower() in _MONTHS:
            return CitedNumber(Decimal(_MONTHS[tok.text.lower()]), NUMBER, tok.start, tok.end, tok.text)
        if tok.fold in _PROPORTIONS:
            return CitedNumber(_PROPORTIONS[tok.fold], NUMBER, tok.start, tok.end, tok.text)
        return None


def _abbreviated_months(text: str) -> list[CitedNumber]:
    found = []
    months = {m: n for n, m in enumerate(_MONTH_ABBREVIATIONS.split("|"), start=1)}
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


# --------------------------------------------------------------------------
# Checking

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
