"""`extract_numbers(text)`: every number a pt-BR text cites, with offsets.

A tokenizer (identifiers and list markers masked first) feeds a small
recursive-descent parser over digits, number words, scales, signs and
units. Each `_Parser` method takes a token index and returns what it read
and the next index, or None; it never consumes a token it cannot use.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal

from common.text import fold_lower
from explanations.numbers.types import (
    CODE,
    COUNT,
    CURRENCIES,
    MONTH,
    NUMBER,
    PERCENT,
    PERCENTAGE_POINTS,
    PROPORTION,
    QUARTER,
    SEMESTER,
    TIME,
    YEAR,
    CitedNumber,
)
from explanations.numbers.vocabulary import (
    CODE_NOUNS,
    COLLECTIVES,
    COUNT_NOUNS,
    CURRENCY_CODES,
    CURRENCY_SYMBOLS,
    CURRENCY_WORDS,
    DIGIT_SCALES,
    FOREIGN_MONTHS,
    FRACTION_WORDS,
    GLUED_SCALES,
    HUNDREDS,
    MONTH_ABBREVIATIONS,
    MONTHS,
    NOT_A_SIGN_AFTER,
    ORDINAL_MARKS,
    ORDINAL_WORDS,
    PERIOD_NOUNS,
    PROPORTIONS,
    SCALES,
    TENS,
    UNITS,
)

# --------------------------------------------------------------------------
# Tokens

_TOKEN_RE = re.compile(
    r"(?P<cur>R\$|US\$|U\$|€|\$)"
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
# Dates and month/year in digits: "15/03/2026", "03/2026".
_DATE_RE = re.compile(r"(?<![\w/.,])(?:(?P<day>\d{1,2})/)?(?P<month>0?[1-9]|1[0-2])/(?P<year>\d{4})(?![\w/])")
# Times of day: "14h", "14h30", "14:30".
_TIME_RE = re.compile(r"(?<![\w.,:])(?P<hour>[01]?\d|2[0-3])(?:h(?P<hmin>[0-5]\d)?(?:min)?|:(?P<min>[0-5]\d))(?![\w:])")
# A fraction in digits ("1/3 das lojas"): a proportion, like "um terço".
_FRACTION_RE = re.compile(r"(?<![\w/.,])(?P<num>[1-9])/(?P<den>[2-9]|10)(?![\w/])")
_YEAR_BEFORE = {"de", "em", "ano", "desde", "ate", "para", "of", "in"}


# Words repeat: fold each distinct one once.
_fold = functools.lru_cache(maxsize=8192)(fold_lower)


class _Token:
    """One token; `fold` (lower case, no accents) computed once: the parser reads it many times."""

    __slots__ = ("end", "fold", "start", "text", "type")

    def __init__(self, type: str, text: str, start: int, end: int):  # noqa: A002 - the token's type
        self.type = type  # cur | num | word | sym
        self.text = text
        self.start = start
        self.end = end
        self.fold = _fold(text) if type == "word" else text


def _tokenize(text: str, masked: list[tuple[int, int]]) -> list[_Token]:
    hidden = bytearray(len(text))  # 1 where a masked span covers the text
    for a, b in masked:
        hidden[a:b] = b"\x01" * (b - a)
    if not masked:
        return [_Token(m.lastgroup, m.group(), *m.span()) for m in _TOKEN_RE.finditer(text)]
    return [_Token(m.lastgroup, m.group(), *m.span()) for m in _TOKEN_RE.finditer(text) if not hidden[m.start()]]


def _masked_spans(text: str, prescanned: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans = [m.span() for m in _LIST_MARKER_RE.finditer(text)]
    spans += prescanned
    for m in _IDENTIFIER_RE.finditer(text):
        run = m.group()
        if run.isalpha() or run.isdecimal():  # most runs: a word or a number, not an identifier
            continue
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
        self.n = len(tokens)

    def fold(self, i: int) -> str | None:
        return self.t[i].fold if i < self.n and self.t[i].type == "word" else None

    def is_conj(self, i: int) -> bool:
        # Raw "e" only: folding would turn the verb "é" into "e".
        return i < self.n and self.t[i].type == "word" and self.t[i].text.lower() == "e"

    def is_sym(self, i: int, chars: str) -> bool:
        return i < self.n and self.t[i].type == "sym" and self.t[i].text in chars

    def glued(self, i: int, j: int) -> bool:
        return j < self.n and self.t[i].end == self.t[j].start

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
        negative = False
        currency = ""
        # A minus glued to the number, not to a word or number before it ("2026-03").
        minus_sign = (
            self.is_sym(j, "-−")
            and self.glued(j, j + 1)
            and not (j > 0 and self.glued(j - 1, j) and self.t[j - 1].type in ("num", "word"))
        )
        menos = self.fold(j) == "menos" and not (j > 0 and self.fold(j - 1) in NOT_A_SIGN_AFTER)
        if minus_sign or menos:
            negative, j = True, j + 1
        if j < self.n and self.t[j].type == "cur":
            currency, j = CURRENCY_SYMBOLS[self.t[j].text], j + 1
        elif self.fold(j) in CURRENCY_CODES and j + 1 < self.n and self.t[j + 1].type == "num":
            currency, j = CURRENCY_CODES[self.fold(j)], j + 1
            if not negative and self.is_sym(j, "-−") and self.glued(j, j + 1):
                negative, j = True, j + 1
        core_i = j
        core = self.digits_quantity(j) or self.words_quantity(j)
        if core is None:
            return None
        value, step, j, ordinal, lone_article, precision = core
        if ordinal:
            period = PERIOD_NOUNS.get(self.fold(j))
            if period:  # "2º trimestre"
                kind = QUARTER if period == "quarter" else SEMESTER
                return self.make(start_i, j + 1, value, kind, None, negative, Decimal(1)), j + 1
            return self.make(start_i, j, value, NUMBER, None, negative, Decimal(1)), j
        if (denominator := FRACTION_WORDS.get(self.fold(j))) and not currency and step is None:
            # "três quartos", "um quarto", "dois terços": a proportion, not the numerator alone.
            value = value / denominator
            return self.make(start_i, j + 1, value, PROPORTION, None, negative, None), j + 1
        if (collective := COLLECTIVES.get(self.fold(j))) and not currency:
            value, j, step, lone_article, precision = value * collective, j + 1, None, False, Decimal(1)
        kind = CURRENCIES[currency] if currency else NUMBER
        unit = self.unit(j, step)
        noun = ""
        if unit:
            unit_kind, j, divisor = unit
            if unit_kind != CURRENCIES.get(currency, unit_kind) and currency:
                unit_kind = kind  # "US$ 10 reais" is nonsense; the symbol wins
            kind = unit_kind
            value = value / divisor
            step = None if step is None else step / divisor
            precision = precision / divisor
        elif lone_article and not (currency or negative):
            return None  # "um aumento": the article, not the number one
        if kind in CURRENCIES.values() and (cents := self.cents(j, value)):
            (value, j), step, precision = cents, None, Decimal("0.01")  # cents written: an exact amount
        if kind == NUMBER and not negative:
            kind, noun, j = self.meaning(start_i, core_i, j, value, step)
        return self.make(start_i, j, value, kind, step, negative, precision, noun), j

    def meaning(self, start_i: int, core_i: int, j: int, value: Decimal, step) -> tuple[str, str, int]:
        """Kind of a plain number from the words around it: a count before a
        counted noun, a code after an identifying noun, a year."""
        after = self.fold(j)
        scaled = step is not None or self.fold(j - 1) in COLLECTIVES
        partitive = after in ("das", "dos") and self.fold(j + 1) in COUNT_NOUNS  # "cinco das filiais"
        if (partitive or (after == "de" and scaled)) and self.fold(j + 1) in COUNT_NOUNS:
            after, j = self.fold(j + 1), j + 1  # "2 milhões de pessoas"
        if after in COUNT_NOUNS:
            return COUNT, after, j + 1
        before = self.fold(start_i - 1) if start_i else None
        raw = self.t[core_i].text
        if before in CODE_NOUNS and self.t[core_i].type == "num" and raw.isdecimal() and step is None:
            return CODE, before, j
        if (
            self.t[core_i].type == "num"
            and len(raw) == 4
            and raw.isdecimal()
            and 1900 <= int(raw) <= 2100
            and (before in _YEAR_BEFORE or (start_i and self.t[start_i - 1].text.lower() in MONTHS))
        ):
            return YEAR, "", j
        return NUMBER, "", j

    def make(self, i: int, j: int, value, kind, step, negative, precision=None, noun="") -> CitedNumber:
        start, end = self.t[i].start, self.t[j - 1].end
        value = Decimal(value)
        return CitedNumber(-value if negative else value, kind, start, end, self.text[start:end], step, precision, noun)

    def digits_quantity(self, j: int):
        if j >= self.n or self.t[j].type != "num":
            return None
        value, decimals = _digits_value(self.t[j].text)
        precision = Decimal(1).scaleb(-decimals)
        if decimals == 0 and value:
            digits = self.t[j].text.replace(".", "")
            precision = Decimal(1).scaleb(len(digits) - len(digits.rstrip("0")))  # "1.235.000": to the thousand
        k = j + 1
        nxt = self.t[k] if k < self.n else None
        if nxt and self.glued(j, k) and (nxt.text in ORDINAL_MARKS):
            return value, None, k + 1, True, False, precision
        scale = DIGIT_SCALES.get(self.fold(k)) or (GLUED_SCALES.get(self.fold(k)) if self.glued(j, k) else None)
        step = None
        if scale:
            value, step, k = value * scale, precision * scale, k + 1
            value, k, step = self.scaled_tail(k, value, scale, step)
            precision = step if step is not None else Decimal(1)
        elif self.is_conj(k) and self.fold(k + 1) in ("meio", "meia") and self.unit(k + 2, None):
            return value + Decimal("0.5"), None, k + 2, False, False, Decimal("0.5")  # "3 e meio por cento"
        return value, step, k, False, False, precision

    def scaled_tail(self, k: int, value: Decimal, scale: int, step):
        """ "1 milhão e 200 mil", "3 mil e quinhentos", "2 mil e 500", "2 milhões e meio"."""
        if not self.is_conj(k):
            return value, k, step
        if self.fold(k + 1) in ("meio", "meia"):
            return value + Decimal(scale) / 2, k + 2, Decimal(scale) / 2
        nxt = self.t[k + 1] if k + 1 < self.n else None
        if nxt and nxt.type == "num":
            inner, decimals = _digits_value(nxt.text)
            sub = DIGIT_SCALES.get(self.fold(k + 2))
            if sub and sub < scale and inner * sub < scale:
                return value + inner * sub, k + 3, Decimal(1).scaleb(-decimals) * sub
            if not sub and decimals == 0 and inner < scale and value == value.to_integral_value():
                return value + inner, k + 2, None  # "2 mil e 500": every digit written
            return value, k, step
        words = self.word_integer(k + 1)
        if words and words[0] < scale:
            return value + words[0], words[1], (Decimal(words[2]) if words[2] else None)
        return value, k, step

    def words_quantity(self, j: int):
        if self.fold(j) in ("meio", "meia"):
            if (unit := self.unit(j + 1, None)) and unit[0] in (PERCENT, PERCENTAGE_POINTS):
                return Decimal("0.5"), None, j + 1, False, False, Decimal("0.5")  # "meio por cento"
            if self.fold(j + 1) in COLLECTIVES:
                return Decimal("0.5"), None, j + 1, False, False, Decimal("0.5")  # "meia dúzia"
        parsed = self.word_integer(j)
        if not parsed:
            return None
        integer, k, step = parsed
        value = Decimal(integer)
        lone_article = k == j + 1 and self.fold(j) in ("um", "uma")
        precision = Decimal(step) if step else Decimal(1)
        if self.fold(k) == "virgula" and (fraction := self.word_fraction(k + 1)):
            value = Decimal(f"{integer}.{fraction[0]}")
            k, step, lone_article = fraction[1], None, False
            precision = Decimal(1).scaleb(-len(fraction[0]))
        elif step is None and self.is_conj(k) and self.fold(k + 1) in ("meio", "meia"):
            # "três e meio por cento", "dois e meio"
            value, k, lone_article, precision = value + Decimal("0.5"), k + 2, False, Decimal("0.5")
        return value, (Decimal(step) if step else None), k, False, lone_article, precision

    def unit(self, k: int, step) -> tuple[str, int, int] | None:
        """A unit after the number: (kind, next index, divisor)."""
        w = self.fold(k)
        if self.is_sym(k, "%") or w == "porcento":
            return PERCENT, k + 1, 100
        if w == "por" and self.fold(k + 1) == "cento":
            return PERCENT, k + 2, 100
        if w in ("ponto", "pontos") and self.fold(k + 1) in ("percentual", "percentuais"):
            return PERCENTAGE_POINTS, k + 2, 100
        if w == "pp":
            return PERCENTAGE_POINTS, k + 1, 100
        if w == "p" and self.is_sym(k + 1, ".") and self.fold(k + 2) == "p":
            end = k + 4 if self.is_sym(k + 3, ".") and self.glued(k + 2, k + 3) else k + 3
            return PERCENTAGE_POINTS, end, 100
        if w in CURRENCY_WORDS:
            return CURRENCIES[CURRENCY_WORDS[w]], k + 1, 1
        if w == "de" and step is not None and self.fold(k + 1) in CURRENCY_WORDS:
            return CURRENCIES[CURRENCY_WORDS[self.fold(k + 1)]], k + 2, 1
        if w in ("centavo", "centavos"):
            return CURRENCIES["BRL"], k + 1, 100
        return None

    def cents(self, k: int, value: Decimal):
        """ "... reais e cinquenta centavos"."""
        if not self.is_conj(k) or self.t[k - 1].fold not in CURRENCY_WORDS:
            return None
        if k + 1 < self.n and self.t[k + 1].type == "num":
            amount, end = _digits_value(self.t[k + 1].text)[0], k + 2
        else:
            parsed = self.word_integer(k + 1)
            if not parsed:
                return None
            amount, end = Decimal(parsed[0]), parsed[1]
        if self.fold(end) not in ("centavo", "centavos") or amount >= 100:
            return None
        return value + amount / 100, end + 1

    def word_reading(self, i: int) -> tuple[CitedNumber, int] | None:
        """Words that are numbers on their own: months, proportions,
        "segundo trimestre", "um quarto"."""
        tok = self.t[i]
        if tok.type != "word":
            return None
        lower = tok.text.lower()
        if lower in MONTHS or lower in FOREIGN_MONTHS:
            month = MONTHS.get(lower) or FOREIGN_MONTHS[lower]
            return CitedNumber(Decimal(month), MONTH, tok.start, tok.end, tok.text, None, Decimal(1)), i + 1
        fold = tok.fold
        if fold in ORDINAL_WORDS and (period := PERIOD_NOUNS.get(self.fold(i + 1))):
            end = self.t[i + 1].end
            kind = QUARTER if period == "quarter" else SEMESTER
            return CitedNumber(Decimal(ORDINAL_WORDS[fold]), kind, tok.start, end, self.text[tok.start : end]), i + 2
        if fold in PROPORTIONS:
            value = PROPORTIONS[fold]
            kind = PROPORTION if value < 1 else NUMBER  # "o dobro" is a multiple, not a share
            return CitedNumber(value, kind, tok.start, tok.end, tok.text), i + 1
        return None


def _prescanned(text: str) -> tuple[list[CitedNumber], list[tuple[int, int]]]:
    """Forms read whole before tokenizing: "mar/26", dates, times, "1/3"; and their spans."""
    found, spans = [], []
    months = {m: n for n, m in enumerate(MONTH_ABBREVIATIONS.split("|"), start=1)}
    for m in _MONTH_ABBREVIATION_RE.finditer(text):
        spans.append(m.span())
        year = m.group("year")
        year_value = Decimal(year) + (2000 if len(year) == 2 else 0)
        found.append(CitedNumber(Decimal(months[m.group("month").lower()]), MONTH, *m.span("month"), m.group("month")))
        found.append(CitedNumber(year_value, YEAR, *m.span("year"), year))
    if "/" in text:
        for m in _DATE_RE.finditer(text):
            spans.append(m.span())
            if m.group("day"):
                found.append(CitedNumber(Decimal(m.group("day")), NUMBER, *m.span("day"), m.group("day")))
            found.append(CitedNumber(Decimal(m.group("month")), MONTH, *m.span("month"), m.group("month")))
            found.append(CitedNumber(Decimal(m.group("year")), YEAR, *m.span("year"), m.group("year")))
        for m in _FRACTION_RE.finditer(text):
            spans.append(m.span())
            value = Decimal(m.group("num")) / Decimal(m.group("den"))
            found.append(CitedNumber(value, PROPORTION, *m.span(), m.group()))
    for m in _TIME_RE.finditer(text):
        spans.append(m.span())
        minutes = m.group("hmin") or m.group("min") or "0"
        value = Decimal(m.group("hour")) + Decimal(minutes) / 60
        found.append(CitedNumber(value, TIME, *m.span(), m.group()))
    return found, spans


# Folded words that may start a number or a number-like reading.
_NUMBERISH = frozenset(
    {
        *UNITS,
        *TENS,
        *HUNDREDS,
        *SCALES,
        *ORDINAL_WORDS,
        *PROPORTIONS,
        "cem",
        "meio",
        "meia",
        "menos",
        "um",
        "uma",
        *CURRENCY_CODES,
    }
)
_MONTH_NAMES = frozenset({*MONTHS, *FOREIGN_MONTHS})


def extract_numbers(text: str) -> list[CitedNumber]:
    """Every number cited in `text`, in order of appearance."""
    found, prescanned = _prescanned(text)
    tokens = _tokenize(text, _masked_spans(text, prescanned))
    parser = _Parser(text, tokens)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if (tok.type == "word" and tok.fold not in _NUMBERISH and tok.text.lower() not in _MONTH_NAMES) or (
            tok.type == "sym" and tok.text not in "-−"
        ):
            i += 1  # most tokens are prose: skip them without trying every reading
            continue
        word = parser.word_reading(i)
        if word and word[0].kind != NUMBER:  # months and periods before "primeiro"/"quarto" as numbers
            found.append(word[0])
            i = word[1]
            continue
        quantity = parser.quantity(i)
        if quantity:
            found.append(quantity[0])
            i = quantity[1]
            continue
        if word:
            found.append(word[0])
            i = word[1]
            continue
        i += 1
    return sorted(found, key=lambda c: c.start)
