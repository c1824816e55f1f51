"""Property tests: what independent pt-BR writers produce is read back exactly.

num2words (lang pt_BR) writes numbers and money in words; Babel writes
currency, percentages and decimals with the pt_BR locale. Neither shares
code with explanations.numbers or explanations.formatting.
"""

from decimal import ROUND_HALF_UP
from decimal import Decimal as D

from babel.numbers import (
    format_compact_currency,
    format_compact_decimal,
    format_currency,
    format_decimal,
    format_percent,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from num2words import num2words

from explanations.formatting import format_brl, format_month_year, format_number
from explanations.formatting import format_percent as our_percent
from explanations.numbers import CURRENCY, NUMBER, PERCENT, CitableNumber, check_narrative, extract_numbers

TRILLION = 10**12
integers = st.integers(min_value=0, max_value=1000 * TRILLION - 1)
cents = st.decimals(min_value=D("-1e12"), max_value=D("1e12"), places=2, allow_nan=False, allow_infinity=False)
fractions = st.decimals(min_value=D(-50), max_value=D(50), places=6, allow_nan=False, allow_infinity=False)


def only(text):
    found = extract_numbers(f"No período, o valor foi {text} segundo a simulação.")
    assert len(found) == 1, (text, found)
    return found[0]


@settings(max_examples=400)
@given(integers.filter(lambda n: n != 1))
def test_num2words_integers(n):
    # "um" alone is the article (documented); with a unit it is one.
    cited = only(num2words(n, lang="pt_BR"))
    assert (cited.value, cited.kind) == (n, NUMBER)


def test_a_lone_um_is_the_article_but_one_with_a_unit():
    assert extract_numbers("foi um aumento") == []
    assert only("um real").value == 1
    assert only("um por cento").value == D("0.01")


@settings(max_examples=200)
@given(integers)
def test_num2words_negative_integers(n):
    cited = only(num2words(-n if n else -1, lang="pt_BR"))
    assert cited.value == (-n if n else -1)


@settings(max_examples=300)
@given(st.decimals(min_value=0, max_value=D("1e9"), places=4, allow_nan=False, allow_infinity=False))
def test_num2words_decimals(value):
    text = num2words(value, lang="pt_BR")
    if value == 1:
        text += " por cento"
        value = D("0.01")
    cited = only(text)
    assert cited.value == value


@settings(max_examples=300)
@given(cents)
def test_num2words_currency(value):
    cited = only(num2words(value, lang="pt_BR", to="currency"))
    # num2words 0.5.14 drops the sign of amounts between -1 and 0
    # ("zero reais e um centavo" for -0.01): compare what it wrote.
    expected = abs(value) if -1 < value < 0 else value
    assert (cited.value, cited.kind) == (expected, CURRENCY)


@settings(max_examples=200)
@given(st.integers(min_value=0, max_value=TRILLION))
def test_num2words_percent_in_words(n):
    cited = only(num2words(n, lang="pt_BR") + " por cento")
    assert (cited.value, cited.kind) == (D(n) / 100, PERCENT)


@settings(max_examples=300)
@given(cents)
def test_babel_currency(value):
    cited = only(format_currency(value, "BRL", locale="pt_BR"))
    assert (cited.value, cited.kind, cited.step) == (value, CURRENCY, None)


@settings(max_examples=300)
@given(fractions)
def test_babel_percent(fraction):
    cited = only(format_percent(fraction, locale="pt_BR", decimal_quantization=False))
    assert (cited.value, cited.kind) == (fraction, PERCENT)


@settings(max_examples=300)
@given(fractions)
def test_babel_percent_with_two_decimals(fraction):
    text = format_percent(fraction, locale="pt_BR", format="#,##0.00%")
    cited = only(text)
    assert cited.value == (fraction * 100).quantize(D("0.01")) / 100


@settings(max_examples=300)
@given(st.decimals(min_value=D("-1e12"), max_value=D("1e12"), places=3, allow_nan=False, allow_infinity=False))
def test_babel_decimal(value):
    cited = only(format_decimal(value, locale="pt_BR"))
    assert (cited.value, cited.kind) == (value, NUMBER)


@settings(max_examples=300)
@given(st.integers(min_value=1000, max_value=999 * TRILLION))
def test_babel_compact_forms_pass_the_rounding_rule(n):
    # "1,2 mil", "3,4 milhões", "R$ 1,2 mi": rounded to one decimal.
    for text, kind in (
        (format_compact_decimal(n, locale="pt_BR", format_type="long", fraction_digits=1), NUMBER),
        (format_compact_currency(n, "BRL", locale="pt_BR", fraction_digits=1), CURRENCY),
    ):
        citable = [CitableNumber(D(n), CURRENCY, format_brl(n))]
        check = check_narrative(f"O valor foi {text} no período.", citable, rounding="scale")
        assert check.passed, (n, text, check)
        assert check.cited[0].kind == kind


@settings(max_examples=300)
@given(cents)
def test_our_currency_formatter_round_trips(value):
    cited = only(format_brl(value))
    assert (cited.value, cited.kind) == (value, CURRENCY)


@settings(max_examples=300)
@given(fractions)
def test_our_percent_formatter_round_trips(fraction):
    cited = only(our_percent(fraction))
    assert cited.value == (fraction * 100).quantize(D("0.01"), rounding=ROUND_HALF_UP) / 100


@settings(max_examples=200)
@given(st.decimals(min_value=D("-1e12"), max_value=D("1e12"), places=3, allow_nan=False, allow_infinity=False))
def test_our_number_formatter_round_trips(value):
    assert only(format_number(value)).value == value


@given(st.integers(min_value=1900, max_value=2200), st.integers(min_value=1, max_value=12))
def test_month_year_round_trips(year, month):
    found = extract_numbers(format_month_year(year, month))
    assert [c.value for c in found] == [month, year]
