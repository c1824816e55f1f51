"""explanations.numbers: extraction of cited numbers (pt-BR) and the check.

Plain tests, no database: the module is pure Python.
"""

from decimal import Decimal as D

import pytest

from explanations.numbers import (
    CODE,
    COUNT,
    CURRENCY,
    MONTH,
    NUMBER,
    PERCENT,
    PERCENTAGE_POINTS,
    PERIOD,
    YEAR,
    CitableNumber,
    check_narrative,
    extract_numbers,
)


def values(text):
    return [(c.value, c.kind) for c in extract_numbers(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.234,56", [(D("1234.56"), NUMBER)]),
        ("R$ 1.234.567,89", [(D("1234567.89"), CURRENCY)]),
        ("R$\xa01.234,56", [(D("1234.56"), CURRENCY)]),
        ("-R$ 1.234,56", [(D("-1234.56"), CURRENCY)]),
        ("R$ 3 mil", [(D(3000), CURRENCY)]),
        ("R$ 1,2 milhão", [(D(1200000), CURRENCY)]),
        ("R$ 1,2 mi", [(D(1200000), CURRENCY)]),
        ("2 bilhões", [(D(2000000000), NUMBER)]),
        ("3 milhões de reais", [(D(3000000), CURRENCY)]),
        ("2,45%", [(D("0.0245"), PERCENT)]),
        ("2,45 %", [(D("0.0245"), PERCENT)]),
        ("-3,5%", [(D("-0.035"), PERCENT)]),
        ("mil e quinhentos", [(D(1500), NUMBER)]),
        ("mil e quinhentos reais", [(D(1500), CURRENCY)]),
        ("vinte e três por cento", [(D("0.23"), PERCENT)]),
        ("cem por cento", [(D(1), PERCENT)]),
        ("um milhão e meio", [(D(1500000), NUMBER)]),
        ("1 milhão e 200 mil", [(D(1200000), NUMBER)]),
        ("R$ 3 mil e quinhentos", [(D(3500), CURRENCY)]),
        ("dois reais e cinquenta centavos", [(D("2.50"), CURRENCY)]),
        ("cinquenta centavos", [(D("0.5"), CURRENCY)]),
        ("menos doze vírgula três quatro", [(D("-12.34"), NUMBER)]),
        ("competência de março de 2026", [(D(3), MONTH), (D(2026), YEAR)]),
        ("03/2026", [(D(3), MONTH), (D(2026), YEAR)]),
        ("mar/26", [(D(3), MONTH), (D(2026), YEAR)]),
        ("loja 0423", [(D(423), CODE)]),
        ("1,5 p.p.", [(D("0.015"), PERCENTAGE_POINTS)]),
        ("2 pontos percentuais", [(D("0.02"), PERCENTAGE_POINTS)]),
        ("a 2ª loja", [(D(2), NUMBER)]),
        # Informal magnitudes glued to the digits, and halves of a scale:
        # numbers a model writes that would otherwise escape the check.
        ("R$ 10k", [(D(10000), CURRENCY)]),
        ("1,5k", [(D(1500), NUMBER)]),
        ("5M", [(D(5000000), NUMBER)]),
        ("R$ 5MM", [(D(5000000), CURRENCY)]),
        ("R$ 5 MM", [(D(5000000), CURRENCY)]),
        ("quase meio milhão de reais", [(D(500000), CURRENCY)]),
        ("meio bilhão", [(D(500000000), NUMBER)]),
        ("meio por cento", [(D("0.005"), PERCENT)]),
    ],
)
def test_extracts_brazilian_formats(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "um aumento puxado por uma loja",  # articles, not the number one
        "a tarefa T-317 do lote sim-2026-03-001",  # identifiers
        "a filial L0423 abre hoje",
        "em primeiro lugar, a segunda loja",  # ordinals in words
        "1. Resumo\n2) Detalhes",  # list markers
        "o marco do ano",
        "no meio do ano, por meia hora",  # "meio" alone is prose
    ],
)
def test_extracts_nothing_from_prose_identifiers_and_layout(text):
    assert extract_numbers(text) == []


@pytest.mark.parametrize("text", ["metade da diferença", "um terço do aumento", "o dobro do baseline"])
def test_proportions_in_words_are_extracted_and_fail_unless_given(text):
    assert len(extract_numbers(text)) == 1
    assert not check_narrative(text, [D("0.0245"), D("1234567.89")]).passed


def test_a_share_in_plural_fraction_words_fails_even_when_its_numerator_is_citable():
    # March 2026: 3 is citable (the month), so "três" alone would pass.
    citable = [CitableNumber(D(3), PERIOD, "março de 2026"), CitableNumber(D(2026), PERIOD, "março de 2026")]
    assert check_narrative("Em março de 2026, a loja respondeu por três", citable).passed
    for share in ("três quartos", "três quintos", "três décimos"):
        check = check_narrative(f"Em março de 2026, a loja respondeu por {share} da diferença.", citable)
        assert not check.passed, share
    # An ordinal in words before a period noun is a quarter: not given here (only a month was).
    quarter = check_narrative("No quarto trimestre de 2026 o custo subiu.", citable)
    assert [(c.text, c.reason) for c in quarter.unmatched] == [("quarto trimestre", "not_in_list")]


def test_a_spaced_m_is_not_a_million():
    assert values("a sala tem 5 m") == [(D(5), NUMBER)]


def test_pelo_menos_is_not_a_minus_sign():
    assert values("pelo menos três lojas") == [(D(3), COUNT)]


def test_offsets_and_text_point_into_the_original():
    text = "Simulado de R$ 1.234.567,89 (2,45% acima)."
    found = extract_numbers(text)
    assert [text[c.start : c.end] for c in found] == ["R$ 1.234.567,89", "2,45%"]
    assert [c.text for c in found] == ["R$ 1.234.567,89", "2,45%"]


def test_a_comma_between_numbers_that_cannot_compose_separates_them():
    assert values("três, quatro e cinco") == [(D(3), NUMBER), (D(4), NUMBER), (D(5), NUMBER)]
    assert values("dois mil, três mil") == [(D(2000), NUMBER), (D(3000), NUMBER)]


def test_end_of_sentence_dot_is_not_a_thousands_separator():
    assert values("O total foi 2026. Em 1.234 casos.") == [(D(2026), NUMBER), (D(1234), COUNT)]


# ---- check_narrative

CITABLE = [
    CitableNumber(D("1234567.89"), CURRENCY, "R$ 1.234.567,89", "totals.simulado"),
    CitableNumber(D("1205000.00"), CURRENCY, "R$ 1.205.000,00", "totals.baseline"),
    CitableNumber(D("0.024537"), PERCENT, "2,45%", "totals.diferenca_pct"),
    CitableNumber(D(423), CODE, "0423", "breakdowns.loja"),
    CitableNumber(D(3), PERIOD, "março de 2026", "period.month"),
    CitableNumber(D(2026), PERIOD, "março de 2026", "period.year"),
]


def test_narrative_citing_amount_percent_store_code_and_period_passes():
    text = (
        "Na competência de março de 2026 o simulado ficou em R$ 1.234.567,89, "
        "2,45% acima do baseline, puxado principalmente pela loja 0423."
    )
    check = check_narrative(text, CITABLE)
    assert check.passed
    assert len(check.cited) == 5
    assert check.unmatched == ()


def test_narrative_citing_a_computed_share_is_rejected():
    text = "A loja 0423 respondeu por 37,5% da diferença."
    check = check_narrative(text, CITABLE)
    assert not check.passed
    assert [c.text for c in check.unmatched] == ["37,5%"]


def test_percent_only_matches_a_percent_and_money_not_a_code():
    assert not check_narrative("R$ 423", CITABLE).passed
    assert not check_narrative("2026%", CITABLE).passed
    assert check_narrative("1.234.567,89", CITABLE).passed  # plain number for an amount


def test_written_minus_must_match_a_negative_value():
    citable = [CitableNumber(D("-0.035"), PERCENT, "-3,5%")]
    assert check_narrative("uma queda de 3,5%", citable).passed
    assert check_narrative("variação de -3,5%", citable).passed
    positive = [CitableNumber(D("0.035"), PERCENT, "3,5%")]
    assert not check_narrative("variação de -3,5%", positive).passed


@pytest.mark.parametrize(
    ("text", "passed"),
    [
        ("R$ 1,2 milhão", True),  # rounded to the written precision, 2.8% off
        ("R$ 1,23 milhão", True),
        ("R$ 1.234.000", False),  # no scale word: exact or nothing
        ("R$ 1 milhão", False),  # within the step but 19% off
        ("R$ 1,3 milhão", False),  # not the rounding of 1.234.567
        ("um milhão e duzentos mil reais", False),  # step 1000: 1.200.000 ± 500
    ],
)
def test_rounding_with_a_scale_word_when_the_result_opts_in(text, passed):
    citable = [CitableNumber(D(1234567), CURRENCY, "R$ 1.234.567,00")]
    check = check_narrative(text, citable, rounding="scale")
    assert (check.passed, check.rounding) == (passed, "scale")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("R$ 1,2 milhão", "rounded"),
        ("R$ 1,23 milhão", "rounded"),
        ("R$ 1.234.600", "rounded"),  # trailing zeros: rounded to the hundred
        ("1,23 milhão de reais", "rounded"),
        ("um milhão e duzentos mil reais", "not_in_list"),  # ± 500: not the rounding of it
        ("R$ 1,3 milhão", "not_in_list"),
    ],
)
def test_exact_by_default_a_rounded_citation_fails_as_rounded(text, reason):
    check = check_narrative(text, [CitableNumber(D(1234567), CURRENCY, "R$ 1.234.567,00")])
    assert check.rounding == "exact"
    assert [(c.text, c.reason) for c in check.unmatched] == [(text, reason)]


def test_exact_scale_forms_pass_by_default_when_they_are_the_value():
    citable = [CitableNumber(D(1200000), CURRENCY, "R$ 1.200.000,00"), CitableNumber(D(3000), CURRENCY, "R$ 3.000,00")]
    for text in ("R$ 1,2 milhão", "R$ 1,2 mi", "um milhão e duzentos mil reais", "R$ 3 mil", "três mil reais"):
        assert check_narrative(text, citable).passed, text


def test_listed_rounded_percent_and_raw_value_both_match():
    assert check_narrative("2,45%", CITABLE).passed
    assert not check_narrative("2,5%", CITABLE).passed


def test_no_numbers_passes_and_plain_values_are_accepted_as_citable():
    assert check_narrative("O resultado ficou dentro do orçamento.", []).passed
    assert check_narrative("foram 12 lojas", [12]).passed
    assert check_narrative("0,5%", [D("0.005")]).passed


def test_invented_informal_amounts_fail_the_check():
    citable = [CitableNumber(D("1234567.89"), CURRENCY, "R$ 1.234.567,89")]
    for narrative in ("O custo passou de R$ 10k.", "Cerca de meio milhão de reais.", "Um aumento de R$ 3MM."):
        check = check_narrative(narrative, citable)
        assert not check.passed and len(check.unmatched) == 1, narrative
    # The same rounding rule as "R$ 1,2 milhão": 1,2M stands for 1 234 567,89.
    assert check_narrative("Foram R$ 1,2M.", citable, rounding="scale").passed
    assert not check_narrative("Foram R$ 1,2M.", citable).passed
