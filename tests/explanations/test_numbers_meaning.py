"""Numbers checked for what they mean: kinds, exactness, new written forms,
attribution (who) and direction (which way). Plain tests, no database."""

from decimal import Decimal as D

import pytest

from explanations.entities import result_meaning
from explanations.numbers import (
    COUNT,
    CURRENCY_EUR,
    CURRENCY_USD,
    NUMBER,
    PERCENT,
    PROPORTION,
    QUARTER,
    TIME,
    check_narrative,
    extract_numbers,
)
from explanations.prompts import ResultFacts, citable_numbers


def facts(**overrides) -> ResultFacts:
    fields = dict(
        verdict="Simulação viável",
        totals={
            "simulado": D("1234567.89"),
            "baseline": D("1205000.00"),
            "diferenca": D("29567.89"),
            "diferenca_pct": D("0.0245"),
        },
        breakdowns={
            "filial": {"Centro": D("5000.00"), "Norte": D("7200.00")},
            "loja": {"0423": D("18000.00")},
            "matricula": {"884213": D("5234.11")},
        },
        budget=D("1250000.00"),
        period="2026-05",
        pii_keys=frozenset({"matricula"}),
    )
    fields.update(overrides)
    return ResultFacts(**fields)


def check(text, result=None):
    result = result or facts()
    return check_narrative(text, citable_numbers(result), rounding=result.rounding, meaning=result_meaning(result))


def reasons(text, result=None):
    return [(c.text, c.reason) for c in check(text, result).unmatched]


# ---- kinds


@pytest.mark.parametrize(
    ("text", "unmatched"),
    [
        # A count of stores equal to the competence month (May).
        ("Cinco filiais puxaram o aumento.", [("Cinco filiais", "wrong_kind")]),
        ("Cinco das filiais puxaram o aumento.", [("Cinco das filiais", "wrong_kind")]),
        # The right digits in a foreign currency.
        ("A diferença foi de € 29.567,89.", [("€ 29.567,89", "wrong_kind")]),
        ("A diferença foi de US$ 29.567,89.", [("US$ 29.567,89", "wrong_kind")]),
        ("A diferença foi de 29.567,89 dólares.", [("29.567,89 dólares", "wrong_kind")]),
        # Percentage points for a relative change.
        ("O custo subiu 2,45 pontos percentuais.", [("2,45 pontos percentuais", "wrong_kind")]),
        ("O custo subiu 2,45 p.p.", [("2,45 p.p.", "wrong_kind")]),
        # A quarter when only a month was given.
        ("No segundo trimestre de 2026 o custo subiu.", [("segundo trimestre", "not_in_list")]),
        # A store code that is really the year.
        ("A loja 2026 puxou o aumento.", [("2026", "wrong_kind")]),
        # A money amount cited as a head count.
        ("Foram 5.000 funcionários afetados.", [("5.000 funcionários", "wrong_kind")]),
        # A count nobody gave is a computation.
        ("As 3 lojas do estudo subiram.", [("3 lojas", "not_in_list")]),
        # A plain number for a money amount is a value in the list: it passes.
        ("O custo simulado foi 1.234.567,89.", []),
        ("Em maio de 2026 o custo subiu.", []),
    ],
)
def test_a_value_in_the_facts_under_another_meaning_fails(text, unmatched):
    assert reasons(text) == unmatched


def test_given_counts_currencies_points_and_periods_pass_with_their_kind():
    result = facts(
        totals={"vendas": D("29567.89"), "variacao_pp": D("0.012")},
        units={"vendas": "currency:EUR", "variacao_pp": "percentage_points"},
        breakdowns={},
        budget=None,
        counts={"lojas": 5},
        period="2026-Q2",
    )
    assert reasons("No 2º trimestre de 2026, 5 lojas venderam € 29.567,89, alta de 1,2 p.p.", result) == []
    assert reasons("No segundo trimestre, cinco lojas venderam 29.567,89 euros.", result) == []
    assert reasons("Em maio, as vendas foram de R$ 29.567,89.", result) == [
        ("maio", "wrong_kind"),  # 5 is the count of stores, not a month given
        ("R$ 29.567,89", "wrong_kind"),
    ]
    assert reasons("A variação foi de 1,2%.", result) == [("1,2%", "wrong_kind")]
    points = facts(totals={"variacao_pp": D("1.2")}, units={"variacao_pp": "percentage_points"}, breakdowns={})
    assert reasons("A variação foi de 1,2 p.p.", points) == []  # points sent as points also match
    assert "1,2 p.p." in {c.text for c in citable_numbers(points)}
    assert "1,2 p.p." in {c.text for c in citable_numbers(result)}  # and as a fraction


def test_semester_and_year_periods():
    assert reasons("No primeiro semestre de 2026 o custo subiu.", facts(period="2026-S1")) == []
    assert reasons("No segundo semestre de 2026 o custo subiu.", facts(period="2026-S1")) == [
        ("segundo semestre", "not_in_list")
    ]
    assert reasons("Em 2026 o custo subiu.", facts(period="2026")) == []
    assert reasons("Em março de 2026 o custo subiu.", facts(period="2026")) == [("março", "not_in_list")]


def test_counts_said_of_other_things_fail_as_wrong_entity():
    result = facts(counts={"lojas": 3})
    assert reasons("As 3 lojas e 3 filiais pesaram.", result) == []  # same things
    assert reasons("Os 3 funcionários pesaram.", result) == [("3 funcionários", "wrong_entity")]


# ---- exactness


def test_exact_by_default_and_scale_rounding_when_the_result_opts_in():
    text = "O custo simulado foi de R$ 1,2 milhão."
    assert reasons(text) == [("R$ 1,2 milhão", "rounded")]
    scaled = check(text, facts(rounding="scale"))
    assert scaled.passed and scaled.rounding == "scale"
    # Scale rounding never covers digits written without a scale word.
    assert reasons("O custo simulado foi de R$ 1.234.568.", facts(rounding="scale")) == [("R$ 1.234.568", "rounded")]


# ---- new written forms


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("2 mil e 500", D(2500), NUMBER),
        ("R$ 2 mil e 500", D(2500), "currency"),
        ("três e meio por cento", D("0.035"), PERCENT),
        ("3 e meio por cento", D("0.035"), PERCENT),
        ("meio milhão", D(500000), NUMBER),
        ("um quarto da diferença", D("0.25"), PROPORTION),
        ("três quartos da alta", D("0.75"), PROPORTION),
        ("dois terços", D(2) / 3, PROPORTION),
        ("uma dúzia", D(12), NUMBER),
        ("duas dúzias de lojas", D(24), COUNT),
        ("meia dúzia de lojas", D(6), COUNT),
        ("duas dezenas", D(20), NUMBER),
        ("R$ 1,2 mi", D(1200000), "currency"),
        ("às 14h", D(14), TIME),
        ("às 14h30", D("14.5"), TIME),
        ("às 14:30", D("14.5"), TIME),
        ("1/3 das lojas", D(1) / 3, PROPORTION),
        ("2º trimestre", D(2), QUARTER),
        ("US$ 100", D(100), CURRENCY_USD),
        ("€ 100", D(100), CURRENCY_EUR),
        ("100 euros", D(100), CURRENCY_EUR),
        ("EUR 100", D(100), CURRENCY_EUR),
        ("100 USD", D(100), CURRENCY_USD),
    ],
)
def test_new_written_forms_are_read(text, value, kind):
    found = extract_numbers(text)
    assert [(c.value, c.kind) for c in found] == [(value, kind)]


def test_foreign_month_names_are_months():
    assert [(c.value, c.kind) for c in extract_numbers("March 2026")] == [(D(3), "period:month"), (D(2026), "number")]
    assert reasons("Em marzo de 2026 o custo subiu.") == [("marzo", "not_in_list")]


def test_a_share_in_words_matches_a_share_given_as_a_fraction():
    shares = facts(
        breakdowns={"participacao_filial": {"Norte": D("0.25"), "Sul": D("0.75")}},
        units={"participacao_filial": "percent"},
    )
    assert reasons("A filial Norte respondeu por um quarto da alta, e a Sul por três quartos.", shares) == []
    assert reasons("A filial Norte respondeu por um terço da alta.", shares) == [("um terço", "not_in_list")]


def test_a_share_in_new_forms_fails():
    for text in ("A loja 0423 respondeu por um quarto da diferença.", "1/3 das filiais pesou."):
        assert not check(text).passed, text


# ---- attribution


@pytest.mark.parametrize(
    ("text", "passed"),
    [
        ("A filial Norte respondeu por R$ 7.200,00.", True),
        ("A filial Centro respondeu por R$ 7.200,00.", False),
        ("R$ 7.200,00 vieram da filial Norte.", True),
        ("R$ 7.200,00 vieram da filial Centro.", False),
        ("A loja 0423 somou R$ 18.000,00.", True),
        ("A filial Norte somou R$ 18.000,00.", False),
        ("O orçamento de R$ 1.250.000,00 foi respeitado.", True),
        ("O orçamento de R$ 1.234.567,89 foi respeitado.", False),
        ("O teto de R$ 1.234.567,89 foi respeitado.", False),
        ("O custo simulado foi de R$ 1.234.567,89, dentro do orçamento.", True),
        ("O custo simulado foi de R$ 1.250.000,00.", False),
        ("A diferença de R$ 29.567,89 veio sobretudo da loja 0423.", True),
    ],
)
def test_a_number_said_of_an_entity_must_belong_to_it(text, passed):
    result = check(text)
    assert result.passed is passed, result.unmatched
    if not passed:
        assert {c.reason for c in result.unmatched} == {"wrong_entity"}


def test_labels_sent_with_the_result_name_facts():
    result = facts(labels={"budget": ["verba aprovada"], "filial": ["unidade"]})
    assert reasons("A verba aprovada de R$ 1.234.567,89 cobre o custo.", result) == [
        ("R$ 1.234.567,89", "wrong_entity")
    ]
    assert reasons("A verba aprovada de R$ 1.250.000,00 cobre o custo.", result) == []
    assert reasons("R$ 7.200,00 vieram da unidade Centro.", result) == [("R$ 7.200,00", "wrong_entity")]


# ---- direction


@pytest.mark.parametrize(
    ("text", "passed"),
    [
        ("O custo subiu R$ 29.567,89 em relação ao baseline.", True),
        ("O custo caiu R$ 29.567,89 em relação ao baseline.", False),
        ("Houve um aumento de 2,45%.", True),
        ("Houve uma queda de 2,45%.", False),
        ("O custo simulado ficou abaixo do orçamento.", True),
        ("O custo simulado ficou acima do orçamento.", False),
        ("O custo simulado ficou dentro do orçamento.", True),
        ("O custo simulado superou o orçamento.", False),
        ("O custo simulado não superou o orçamento.", True),
        ("O custo simulado ficou 2,45% acima do baseline.", True),
        ("O custo simulado ficou 2,45% abaixo do baseline.", False),
    ],
)
def test_direction_words_must_agree_with_the_sign_of_the_difference(text, passed):
    result = check(text)
    assert result.passed is passed, result.unmatched
    if not passed:
        assert {c.reason for c in result.unmatched} == {"wrong_direction"}


def test_direction_against_a_target_and_of_a_signed_breakdown():
    sales = facts(
        totals={"vendas": D("98000.00")},
        breakdowns={"loja": {"0423": D("-1500.00")}},
        budget=None,
        target=D("100000.00"),
    )
    assert check("As vendas de R$ 98.000,00 ficaram abaixo da meta de R$ 100.000,00.", sales).passed
    assert reasons("As vendas superaram a meta.", sales) == [("superaram", "wrong_direction")]
    assert check("A loja 0423 teve queda de R$ 1.500,00.", sales).passed
    assert reasons("A loja 0423 teve alta de R$ 1.500,00.", sales) == [("R$ 1.500,00", "wrong_direction")]


# ---- PII


def test_people_values_and_names_never_pass():
    assert reasons("A matrícula 884213 recebeu R$ 5.234,11.") == [("884213", "pii"), ("R$ 5.234,11", "pii")]
    named = facts(breakdowns={"colaborador": {"Maria Souza": D("5234.11")}}, pii_keys=frozenset({"colaborador"}))
    assert reasons("Maria Souza teve o maior aumento.", named) == [("Maria Souza", "pii")]


@pytest.mark.parametrize(
    "text",
    [
        "Na competência de maio de 2026, o custo simulado da folha foi de R$ 1.234.567,89, um aumento de "
        "R$ 29.567,89 (2,45%) em relação ao baseline de R$ 1.205.000,00. O resultado ficou dentro do orçamento de "
        "R$ 1.250.000,00. A loja 0423 foi a que mais contribuiu, com R$ 18.000,00.",
        "O custo simulado de R$ 1.234.567,89 não ultrapassa o orçamento de R$ 1.250.000,00; em relação ao "
        "baseline de R$ 1.205.000,00, houve alta de 2,45%.",
        "O custo subiu para R$ 1.234.567,89 em maio de 2026, acima do baseline (R$ 1.205.000,00), mas abaixo do "
        "orçamento de R$ 1.250.000,00.",
        "As filiais Norte e Centro concentraram parte do aumento: R$ 7.200,00 e R$ 5.000,00, respectivamente.",
        "As lojas 0423 e 0107 pesaram no aumento.",
        "Com a diferença de R$ 29.567,89 sobre o baseline, o custo simulado chegou a R$ 1.234.567,89, o que mantém "
        "a folha abaixo do teto de R$ 1.250.000,00.",
    ],
)
def test_narratives_written_the_way_a_model_writes_them_pass(text):
    result = facts(breakdowns={**facts().breakdowns, "loja": {"0423": D("18000.00"), "0107": D("11567.89")}})
    assert reasons(text, result) == []


def test_the_fast_fold_is_common_texts_aligned_fold():
    from common.text import fold_aligned
    from explanations.numbers.meaning import fold

    text = "Orçamento: R$ 1.250,00 — € 3; İstanbul; ß; ﬁ; Ελλάδα; 漢字 " + "".join(map(chr, range(0x20, 0x3100)))
    assert fold(text) == fold_aligned(text) and len(fold(text)) == len(text)
