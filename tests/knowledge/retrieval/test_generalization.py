"""Cross-language without curated translations, synonyms, strict-rule budgeting, multi-part splitting."""

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.signals import coverage, query_slots, query_weights
from knowledge.retrieval.splitting import split_parts

# Portuguese only: no English or Spanish keyword anywhere.
CATALOG = [
    Entry(
        "PLANS",
        "Planos e preços da assinatura",
        "Valores mensais e anuais dos planos.",
        keywords=("planos", "preços"),
        body="O plano anual custa R$ 490 e o mensal R$ 49. O desconto do plano anual é de 15%.",
    ),
    Entry(
        "PASSWORD",
        "Política de senhas",
        "Regras de senha e bloqueio.",
        keywords=("senha",),
        body="A senha precisa de 12 caracteres. Após cinco tentativas erradas a conta fica bloqueada por 30 minutos.",
    ),
    Entry(
        "VACATION",
        "Férias",
        "Como funcionam as férias.",
        keywords=("férias",),
        body="As férias podem ser divididas em até três períodos, com aviso de 30 dias ao gestor.",
    ),
    Entry(
        "REFUND",
        "Devolução do dinheiro",
        "Quando o cliente recebe o dinheiro de volta.",
        body="A devolução do dinheiro é feita em até 7 dias úteis após o cancelamento.",
    ),
]


def index(**config) -> RouterIndex:
    return RouterIndex(CATALOG, config=replace(RouterConfig(), **config))


HELD_OUT = Path(__file__).resolve().parents[3] / "knowledge" / "evaluation" / "catalogs"


@lru_cache(maxsize=None)
def held_out(name: str) -> tuple:
    return tuple(load_package_folder(HELD_OUT / name / "packages"))


# Dev-split questions (Portuguese-only keywords in these catalogs) that the lexicon fixes.
@pytest.mark.parametrize(
    "catalog,question,expected",
    [
        ("hr", "How much is the meal voucher worth per day?", "MEAL_VOUCHER"),
        ("hr", "¿Cuál es el valor diario del vale de comida?", "MEAL_VOUCHER"),
        ("saas", "¿Cuánto dura el período de prueba gratuito?", "FREE_TRIAL"),
        ("hr", "What is the deadline for using up my time bank balance?", "TIME_BANK"),
    ],
)
def test_the_lexicon_takes_an_english_or_spanish_question_to_a_portuguese_only_package(catalog, question, expected):
    entries = held_out(catalog)
    without = RouterIndex(entries, config=RouterConfig(lexicon_weight=0.0)).route(question)
    assert expected not in without.full_ids  # the pair the lexicon fixes
    result = RouterIndex(entries, config=RouterConfig(lexicon_weight=0.5)).route(question)
    assert result.ranked()[0].id == expected
    assert expected in result.full_ids


def test_the_lexicon_translates_into_the_catalog_language_only():
    # A Portuguese word the catalog does not know stays unknown (out-of-domain evidence),
    # instead of becoming its English translation's Portuguese neighbour.
    idx = index(lexicon_weight=0.5)
    slots = {s.label: s for s in query_slots(idx, "Qual o prazo de validade do leite na geladeira?")}
    assert slots["geladeir"].terms == []
    (slot,) = query_slots(idx, "contraseña")
    assert slot.terms == ["senh"] and slot.weight_of("senh") == 0.5
    assert query_slots(index(lexicon_weight=0.0), "contraseña")[0].terms != ["senh"]


def test_translations_of_one_word_share_its_weight():
    # Structured query: "cost" has several Portuguese translations; together they weigh as one term.
    idx = index(lexicon_weight=0.5)
    (slot,) = query_slots(idx, "cost")
    assert len(slot.terms) >= 2  # custo, custar, preço…
    query = query_weights([slot])
    assert all(w == 0.5 for w in query.values())
    covered, _ = coverage(idx, [slot], np.arange(len(CATALOG)))
    assert covered.max() == pytest.approx(0.5)  # the best translation present counts once, at its weight


def test_curator_synonyms_apply_at_query_time():
    question = "Em quantos dias sai o estorno?"
    assert "REFUND" not in index().route(question).full_ids
    idx = index(synonyms=(("estorno", "devolução do dinheiro", "reembolso"),), synonym_weight=0.8)
    result = idx.route(question)
    assert result.ranked()[0].id == "REFUND" and "REFUND" in result.full_ids
    # Zero weight turns the set off.
    assert (
        "REFUND"
        not in index(synonyms=(("estorno", "devolução do dinheiro"),), synonym_weight=0.0).route(question).full_ids
    )


@pytest.mark.parametrize(
    "message,parts",
    [
        ("Quanto custa o Sanger e qual o prazo?", ["Quanto custa o Sanger", "qual o prazo"]),
        ("Qual o prazo e como descartar amostras?", ["Qual o prazo", "como descartar amostras"]),
        ("How much is Sanger and how long does it take?", ["How much is Sanger", "how long does it take"]),
    ],
)
def test_a_conjunction_that_opens_a_new_question_splits(message, parts):
    assert split_parts(message) == parts


@pytest.mark.parametrize("message", ["preço e prazo do Sanger", "sangue e saliva", "kits e primers"])
def test_a_plain_coordination_stays_one_part(message):
    assert split_parts(message) == [message]


@pytest.mark.parametrize(
    "pt,en,es",
    [
        ("Quanto custa?", "How much does it cost?", "¿Cuánto cuesta?"),
        ("Quantos dias?", "How many days?", "¿Cuántos días?"),
        ("E depois?", "And afterwards?", "¿Y después?"),
    ],
)
def test_question_words_are_stop_words_in_all_three_languages(pt, en, es):
    # "quanto" and "depois" were stop words and "much", "cuánto", "afterwards" were not: an English
    # or Spanish question carried an unknown word that counted as out-of-domain evidence.
    from common.text import analyze

    counts = [len(analyze(q)) for q in (pt, en, es)]
    assert counts[1] == counts[0] and counts[2] == counts[0]


@pytest.mark.parametrize(
    "message,plain",
    [
        ("Além disso, qual o preço do plano anual?", "Qual o preço do plano anual?"),
        ("Ademais, qual o preço do plano anual?", "Qual o preço do plano anual?"),
        ("I also need the price of the annual plan.", "I need the price of the annual plan."),
        ("Besides, what is the price of the annual plan?", "What is the price of the annual plan?"),
        ("Además, ¿cuál es el precio del plan anual?", "¿Cuál es el precio del plan anual?"),
    ],
)
def test_additive_adverbs_are_stop_words_in_all_three_languages(message, plain):
    # "também"/"too"/"también" were stop words and "além", "also", "además" were not: the adverb
    # became a term no entry holds and lowered the question's coverage of the entry it asks about.
    from common.text import analyze

    assert analyze(message) == analyze(plain)
    idx = index(lexicon_weight=0.5)
    plans = np.array([0])
    assert CATALOG[0].package_id == "PLANS"
    with_adverb, _ = coverage(idx, query_slots(idx, message), plans)
    without, _ = coverage(idx, query_slots(idx, plain), plans)
    assert with_adverb[0] == pytest.approx(without[0]) and without[0] > 0
