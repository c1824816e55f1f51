"""pt-BR formatting of the numbers a narrative may cite.

The prompt lists every citable number already written the way the model must
write it, so these functions decide the exact text the checker later accepts.
They are deliberately independent of Babel: the property tests use Babel as
the *independent* writer that the extractor must read back.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

MONTHS = (
    "janeiro",
    "fevereiro",
    "março",
    "abril",
    "maio",
    "junho",
    "julho",
    "agosto",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
)

CENT = Decimal("0.01")
# Percentages are shown with at most two decimals ("2,45%"), so the
# fraction they stand for has at most four.
PERCENT_STEP = Decimal("0.01")


def _group(integer_digits: str) -> str:
    """Insert pt-BR thousands dots into a string of digits."""
    head = len(integer_digits) % 3 or 3
    parts = [integer_digits[:head]]
    parts += [integer_digits[i : i + 3] for i in range(head, len(integer_digits), 3)]
    return ".".join(parts)


def format_number(value: Decimal | int, *, decimals: int | None = None) -> str:
    """`1234567.5` -> "1.234.567,5"; with `decimals`, rounded half-up to that many."""
    value = Decimal(value)
    if decimals is not None:
        value = value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    sign = "-" if value < 0 else ""
    text = f"{abs(value):f}"
    integer, _, fraction = text.partition(".")
    out = _group(integer)
    if fraction:
        out += "," + fraction
    return sign + out


def format_brl(value: Decimal | int) -> str:
    """`1234567.891` -> "R$ 1.234.567,89" (cents rounded half-up)."""
    value = Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)
    text = format_number(abs(value), decimals=2)
    return ("-" if value < 0 else "") + "R$ " + text


def format_percent(fraction: Decimal | int) -> str:
    """A fraction as a pt-BR percentage: 0.0245 -> "2,45%", 0.1 -> "10%", -0.035 -> "-3,5%"."""
    percent = (Decimal(fraction) * 100).quantize(PERCENT_STEP, rounding=ROUND_HALF_UP)
    text = format_number(percent)
    if "," in text:
        text = text.rstrip("0").rstrip(",")
    return text + "%"


def format_month_year(year: int, month: int) -> str:
    """(2026, 3) -> "março de 2026"."""
    if not 1 <= month <= 12:
        raise ValueError(f"month out of range: {month}")
    return f"{MONTHS[month - 1]} de {year}"


CURRENCY_PREFIXES = {"BRL": "R$", "USD": "US$", "EUR": "€"}


def format_money(value: Decimal | int, currency: str = "BRL") -> str:
    """Money with its symbol: BRL "R$ 1.234,56", USD "US$ 1.234,56", EUR "€ 1.234,56"."""
    return format_brl(value).replace("R$", CURRENCY_PREFIXES[currency], 1)


def format_points(fraction: Decimal | int) -> str:
    """A difference of percentages (a fraction) in points: 0.015 -> "1,5 p.p."."""
    return format_percent(fraction)[:-1] + " p.p."


def format_period(year: int, month: int | None = None, quarter: int | None = None, semester: int | None = None) -> str:
    """ "março de 2026", "2º trimestre de 2026", "1º semestre de 2026", "2026"."""
    if month is not None:
        return format_month_year(year, month)
    if quarter is not None:
        return f"{quarter}º trimestre de {year}"
    if semester is not None:
        return f"{semester}º semestre de {year}"
    return str(year)
