"""The narration prompt and the citable numbers (pure functions, no database)."""

from decimal import Decimal as D

from explanations.numbers import CODE, COUNT, CURRENCY, MONTH, PERCENT, YEAR, check_narrative
from explanations.prompts import MAX_BREAKDOWN_ITEMS, ResultFacts, build_prompt, citable_numbers

from .conftest import PII_VALUES, REJECTED_NARRATIVE, VERIFIED_NARRATIVE


def payroll_facts(**overrides) -> ResultFacts:
    fields = dict(
        verdict="Simulação viável",
        totals={
            "simulado": D("1234567.89"),
            "baseline": D("1205000.00"),
            "diferenca": D("29567.89"),
            "diferenca_pct": D("0.0245"),
        },
        breakdowns={
            "loja": {"0423": D("18000.00"), "0107": D("11567.89")},
            "matricula": {"884213": D("5234.11"), "771902": D("4987.65")},
        },
        budget=D("1250000.00"),
        period="2026-03",
        rule_core="O custo da folha não pode passar do orçamento da competência.",
        rule_specifics="Reajuste de 3,5% para quem ganha até R$ 5 mil.",
        pii_keys=frozenset({"matricula"}),
    )
    fields.update(overrides)
    return ResultFacts(**fields)


def texts(citable):
    return {(c.kind, c.text) for c in citable}


def test_citable_numbers_come_formatted_in_pt_br():
    found = texts(citable_numbers(payroll_facts()))
    assert (CURRENCY, "R$ 1.234.567,89") in found
    assert (PERCENT, "2,45%") in found  # the fraction 0.0245
    assert (CURRENCY, "R$ 18.000,00") in found
    assert (CODE, "0423") in found
    assert (CURRENCY, "R$ 1.250.000,00") in found  # budget
    assert (MONTH, "março de 2026") in found
    assert (YEAR, "março de 2026") in found
    assert (PERCENT, "3,5%") in found  # from the rule's text
    assert (CURRENCY, "R$ 5 mil") in found


def test_pii_dimension_is_neither_citable_nor_in_the_prompt():
    facts = payroll_facts()
    assert not any(c.label.startswith("matricula") for c in citable_numbers(facts))
    prompt = build_prompt(facts)
    assert "matricula" not in prompt
    for value in PII_VALUES:
        assert value not in prompt


def test_prompt_holds_verdict_totals_breakdown_rule_and_instructions():
    prompt = build_prompt(payroll_facts())
    assert "Veredito: Simulação viável" in prompt
    assert "- simulado: R$ 1.234.567,89" in prompt
    assert "- diferenca_pct: 2,45%" in prompt
    assert "  - 0423: R$ 18.000,00" in prompt
    assert "Regra (núcleo):" in prompt and "Regra (especificações):" in prompt
    assert "exatamente como estão escritos" in prompt
    assert "Não faça contas" in prompt
    assert "Não cite nenhum outro número" in prompt
    assert "texto curto" in prompt
    listed = prompt.split("Números citáveis:")[1]
    assert "- 2,45%" in listed and "- março de 2026" in listed


def test_seed_acceptance_narratives_against_the_citable_list():
    citable = citable_numbers(payroll_facts())
    assert check_narrative(VERIFIED_NARRATIVE, citable).passed
    rejected = check_narrative(REJECTED_NARRATIVE, citable)
    assert not rejected.passed
    assert [n.text for n in rejected.unmatched] == ["60,88%"]


def test_pii_values_cited_in_a_narrative_are_rejected():
    check = check_narrative("O colaborador 884213 recebeu R$ 5.234,11.", citable_numbers(payroll_facts()))
    assert [n.text for n in check.unmatched] == ["884213", "R$ 5.234,11"]


def test_units_override_the_default_money_and_pct_suffix_rules():
    facts = payroll_facts(
        totals={"headcount": D(42), "turnover": D("0.031"), "custo": D(10)},
        units={"headcount": "number", "turnover": "percent"},
        breakdowns={},
    )
    found = texts(citable_numbers(facts))
    assert ("number", "42") in found
    assert (PERCENT, "3,1%") in found
    assert (CURRENCY, "R$ 10,00") in found


def test_large_breakdowns_show_and_cite_only_the_heaviest_entries():
    items = {f"{i:04d}": D(i) for i in range(1, 101)}
    facts = payroll_facts(breakdowns={"loja": items})
    shown = [c for c in citable_numbers(facts) if c.label.startswith("loja.")]
    assert len(shown) == MAX_BREAKDOWN_ITEMS
    assert shown[0].label == "loja.0100"
    assert "(demais itens omitidos)" in build_prompt(facts)


def test_rule_numbers_sent_explicitly_are_citable():
    facts = payroll_facts(rule_numbers=({"value": "0.05", "kind": "percent"}, "12"))
    found = texts(citable_numbers(facts))
    assert (PERCENT, "5%") in found
    assert ("number", "12") in found


def test_numbers_written_in_the_verdict_are_citable():
    facts = payroll_facts(verdict="Inviável: 3 lojas acima da meta")
    assert (COUNT, "3 lojas") in texts(citable_numbers(facts))
    assert check_narrative("Três lojas ficaram acima da meta.", citable_numbers(facts)).passed


def test_pii_keys_match_dimension_names_whatever_their_case_and_accents():
    # The client lists "Matrícula " for a dimension it sends as "matricula":
    # the same people, so their values stay out of the prompt.
    facts = payroll_facts(pii_keys=frozenset({"Matrícula "}))
    prompt = build_prompt(facts)
    for value in PII_VALUES:
        assert value not in prompt
    assert not any(c.label.startswith("matricula") for c in citable_numbers(facts))

    from_model = ResultFacts.from_result(
        type(
            "R",
            (),
            dict(
                verdict="ok", totals={"CPF": "12345678901"}, breakdowns={}, budget=None, target=None,
                period="", rule_core="", rule_specifics="", rule_numbers=[], units={}, pii_keys=["cpf"],
            ),
        )()
    )  # fmt: skip
    assert "12345678901" not in build_prompt(from_model)
    assert "12.345.678.901" not in build_prompt(from_model)


def test_a_breakdown_key_that_is_a_digit_but_not_a_decimal_does_not_crash_the_step():
    # "²".isdigit() is True but int("²") raises: it is a label, not a code.
    facts = payroll_facts(breakdowns={"loja": {"²": D(10), "٤٢٣": D(5)}})
    citable = citable_numbers(facts)
    assert (CODE, "٤٢٣") in texts(citable)  # Arabic-Indic digits are a decimal code (423)
    assert not any(c.kind == CODE and c.text == "²" for c in citable)
    assert "²" in build_prompt(facts, citable)
