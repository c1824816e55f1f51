"""Delivery shapes (seed 004): full within budget, listed, procedures by name, strict rules."""

import pytest

from knowledge.retrieval.fusion import estimate_tokens
from knowledge.routing_service import route_context

from .conftest import find


def test_at_most_three_full_bodies_per_part_by_default(catalog):
    result = route_context(message="Quanto custa a urgência do sequenciamento Sanger?")
    assert 1 <= len(result.full) <= 3
    assert all(d.body for d in result.full)


def test_full_bodies_fit_the_token_budget_and_the_rest_is_listed(catalog):
    generous = route_context(message="Quanto custa a urgência?", budget_tokens=20000)
    tight = route_context(message="Quanto custa a urgência?", budget_tokens=700)
    assert sum(estimate_tokens(d.body) for d in tight.full) <= tight.budget_tokens == 700
    assert len(tight.full) < len(generous.full)
    demoted = set(generous.full_ids) - set(tight.full_ids)
    assert demoted and demoted <= set(tight.listed_ids)
    for package_id in demoted:
        assert any(n["signal"] == "budget" for n in find(tight, package_id).why)


def test_nothing_relevant_is_dropped_for_lack_of_space(catalog):
    roomy = route_context(message="Qual o prazo e o preço do Sanger urgente?", budget_tokens=20000, max_full=5)
    cramped = route_context(message="Qual o prazo e o preço do Sanger urgente?", budget_tokens=50, max_full=0)
    assert cramped.full == []
    assert set(cramped.delivered_ids) == set(roomy.delivered_ids)
    listed = cramped.listed[0].as_listed()
    assert set(listed) == {"id", "title", "summary", "why"}


def test_procedures_arrive_by_name_only_whatever_their_rank(catalog):
    for message in ("Como assino o orçamento?", "CLICKSIGN_PROCESS", "::CLICKSIGN_PROCESS"):
        result = route_context(message=message)
        assert "CLICKSIGN_PROCESS" not in result.full_ids
        assert [p.id for p in result.procedures][:1] == ["CLICKSIGN_PROCESS"]
        assert result.as_dict()["procedures"][0] == {
            "id": "CLICKSIGN_PROCESS",
            "title": find(result, "CLICKSIGN_PROCESS").title,
            "summary": find(result, "CLICKSIGN_PROCESS").summary,
        }


def test_a_relevant_strict_rule_always_arrives_with_its_body(catalog):
    result = route_context(message="Vocês fazem teste de paternidade?", max_full=0, budget_tokens=50)
    rule = next(r for r in result.as_dict()["rules"] if r["id"] == "PORTFOLIO_EXCLUSIONS")
    assert rule["strict"] is True and rule["shape"] == "full" and rule["body"]


def test_rules_pass_the_relevance_test_like_everything_else(make_package):
    make_package(
        "MIGRATION_RULE",
        kind="rule",
        title="Migrações de banco",
        keywords=["migração"],
        body="Nunca altere uma migração já aplicada.",
    )
    make_package(
        "BUTTON_HELP", title="Botão salvar", keywords=["botão salvar"], body="O botão salvar grava o formulário."
    )
    result = route_context(message="O que faz o botão salvar?")
    assert result.full_ids == ["BUTTON_HELP"]
    assert "MIGRATION_RULE" not in result.delivered_ids
    ruled = route_context(message="Posso alterar uma migração aplicada?")
    assert ruled.as_dict()["rules"][0]["id"] == "MIGRATION_RULE"


def test_a_non_strict_rule_that_does_not_make_the_cut_is_listed_by_name(make_package):
    make_package("SOFT_RULE", kind="rule", title="Regra de etiqueta", body="Etiquete cada tubo de amostra.")
    make_package("TUBES", title="Tubos de amostra", keywords=["tubo de amostra"], body="Tubos de amostra e etiquetas.")
    result = route_context(message="Como etiquetar o tubo de amostra?", max_full=1)
    rules = {r["id"]: r for r in result.as_dict()["rules"]}
    assert rules["SOFT_RULE"]["shape"] in ("full", "listed")
    if rules["SOFT_RULE"]["shape"] == "listed":
        assert "body" not in rules["SOFT_RULE"]


def test_each_part_of_a_multi_part_message_gets_its_best_entry_in_full(catalog):
    result = route_context(message="Qual o prazo do Sanger e como envio a amostra?", max_full=1)
    assert result.parts == ["Qual o prazo do Sanger", "como envio a amostra"]
    assert set(result.full_ids) == {"DELIVERY_TIMELINES", "SAMPLE_INSTRUCTIONS"}
    for d in result.full:
        assert {n["part"] for n in d.why}  # why says which part asked for it


def test_the_budget_grows_with_the_parts_not_with_the_catalog(catalog, make_package):
    one = route_context(message="Qual o prazo do Sanger?")
    two = route_context(message="Qual o prazo do Sanger e como envio a amostra?")
    assert one.budget_tokens < two.budget_tokens < 2 * one.budget_tokens
    for n in range(30):
        make_package(f"EXTRA_{n}", title=f"Extra {n}", body=f"Prazo do Sanger, caso {n}.")
    bigger = route_context(message="Qual o prazo do Sanger?")
    assert bigger.budget_tokens == one.budget_tokens
    assert len(bigger.full) <= 3


PARALLEL = [
    (
        "PRICING_RULES",
        "Vocês dão desconto por volume?",
        "Do you give a volume discount?",
        "¿Hacen descuento por volumen?",
    ),
    (
        "GOSOLOS_SAMPLING",
        "Como faço a coleta de amostra de solo?",
        "How do I collect a soil sample?",
        "¿Cómo hago la toma de muestra de suelo?",
    ),
    (
        "TARGETS_QPCR",
        "Quais patógenos o qPCR detecta?",
        "Which pathogens does the qPCR detect?",
        "¿Qué patógenos detecta el qPCR?",
    ),
    (
        "COMPANY_INFO",
        "Qual o telefone de contato?",
        "What is the contact phone number?",
        "¿Cuál es el teléfono de contacto?",
    ),
    ("DELIVERY_TIMELINES", "Qual o prazo de entrega?", "What is the delivery time?", "¿Cuál es el plazo de entrega?"),
]


@pytest.mark.parametrize("expected,pt,en,es", PARALLEL)
def test_the_same_question_in_three_languages_delivers_the_same_best_entry(catalog, expected, pt, en, es):
    results = [route_context(message=m) for m in (pt, en, es)]
    for result in results:
        assert result.ranked()[0].id == expected
        assert expected in result.full_ids
    # The same knowledge bodies in all three languages (strict rules, guardrails, may differ).
    assert len({tuple(d.id for d in r.full) for r in results}) == 1


@pytest.mark.parametrize(
    "message",
    [
        "Vai chover amanhã em São Paulo?",
        "Me passa uma receita de bolo de cenoura",
        "Who won the Champions League final?",
        "Recommend a good sci-fi movie",
        "¿Cuál es la receta de la paella valenciana?",
        "¿Qué tiempo hará mañana en Madrid?",
    ],
)
def test_an_out_of_domain_question_delivers_nothing_in_full(catalog, message):
    result = route_context(message=message)
    assert result.full_ids == []
