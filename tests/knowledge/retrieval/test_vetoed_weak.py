"""A strong lexical hit the meaning check vetoed counts as a weak one when the meaning points elsewhere (issue 12).

The meaning check (``dense_veto_lift``) lists, instead of giving in full, a keyword or BM25 hit whose entry
the question's vector does not come near; its rank's whole share used to stay, so the words still
outranked the entry the question means. With ``vetoed_weak_lift`` (0.025) such a hit keeps
``weak_lexical_factor`` of its share, as a weak hit does, when the part's closest entry stands at least
that far above the catalog's mean cosine; when the meaning is unsure (a typo the encoder reads poorly) the
words keep their rank. Chosen by leave-one-catalog-out over the twelve dev splits (docs/retrieval.md,
"Vetoed words count as weak"). The questions below are dev-split questions.
"""

from dataclasses import replace

import pytest

from common.text import retrieval_embeddings
from knowledge.evaluation.tune import CATALOGS, dense_of
from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import RouterConfig, RouterIndex
from knowledge.retrieval.fusion import DEFAULT_RRF_K, DEFAULT_WEIGHTS

pytestmark = pytest.mark.skipif(
    not retrieval_embeddings.available(), reason="the bundled embedding models are required"
)

UNDAMPED = 9.0  # vetoed_weak_lift: never damp a vetoed hit


def _index(catalog, **config):
    entries = load_package_folder(CATALOGS / catalog / "packages")
    return RouterIndex(entries, config=replace(RouterConfig(), **config), dense=dense_of(catalog, entries))


def _scores(result):
    return {d.id: d for d in result.ranked()}


def _signals(delivered):
    return {n["signal"]: n["rank"] for n in delivered.why}


def test_a_vetoed_hit_loses_first_place_to_the_entry_the_meaning_points_at():
    # "Until when can I drop one course without failing?", typed in chat shorthand: "reprovar" is a
    # keyword of the passing-criteria article, which the meaning check vetoes.
    question = "vc sabe ate qdo da pra trancar so uma materia sem reprovar?"
    before = _scores(_index("university", vetoed_weak_lift=UNDAMPED).route(question))
    after = _index("university").route(question)
    vetoed = before["CRITERIOS_APROVACAO"]
    assert "dense_veto" in _signals(vetoed) and vetoed.shape == "listed"
    assert vetoed.score > before["TRANCAMENTO_DISCIPLINA"].score  # the words won
    ranked = after.ranked()
    assert ranked[0].id == "TRANCAMENTO_DISCIPLINA" and ranked[0].shape == "full"
    # The vetoed hit keeps a quarter of its keyword and BM25 shares; nothing else of its score moves.
    damped = _scores(after)["CRITERIOS_APROVACAO"]
    ranks = _signals(damped)
    cut = 0.75 * (
        DEFAULT_WEIGHTS["keyword"] / (DEFAULT_RRF_K + ranks["keyword"])
        + DEFAULT_WEIGHTS["bm25"] / (DEFAULT_RRF_K + ranks["bm25"])
    )
    assert damped.score == pytest.approx(vetoed.score - cut)
    assert damped.shape == "listed"


def test_a_vetoed_hit_keeps_its_rank_when_the_meaning_is_unsure():
    # "I want to do an MBA, does the company pay half?" with typos: the encoder finds nothing clearly
    # (the closest entry stands under 0.025 above the catalog's mean), so the words keep first place.
    question = "quero fazer mba a empresa paga metadi?"
    shipped = _index("hr").route(question).ranked()
    assert shipped[0].id == "TRAINING_BUDGET" and "dense_veto" in _signals(shipped[0])
    # Damping whatever the meaning's lift would lose it.
    always = _index("hr", vetoed_weak_lift=0.0).route(question).ranked()
    assert always[0].id != "TRAINING_BUDGET"


def test_a_part_of_a_longer_message_is_damped_too():
    # A Spanish question about tree branches touching the power lines: "vereda" and friends match the
    # late-payment article by words only. (The whole message's meaning, which also answers it, is held
    # off to show what the damping does on its own.)
    question = "Las ramas del lapacho de la vereda están rozando los cables del poste. ¿Quién se encarga?"
    parts_only = {**RouterConfig().weights, "message": 0.0}
    before = _index("energia", vetoed_weak_lift=UNDAMPED, weights=parts_only).route(question).ranked()
    assert before[0].id == "MULTA_JUROS_ATRASO" and "dense_veto" in _signals(before[0])
    after = _index("energia", weights=parts_only).route(question).ranked()
    assert after[0].id == "PODA_ARVORES"


def test_no_damping_without_the_weak_factor():
    # weak_lexical_factor 1 (KNOWLEDGE_WEAK_LEXICAL_FACTOR=1: ranks alone) leaves vetoed hits whole too.
    question = "vc sabe ate qdo da pra trancar so uma materia sem reprovar?"
    undamped = _index("university", weak_lexical_factor=1.0, vetoed_weak_lift=UNDAMPED).route(question)
    ranks_alone = _index("university", weak_lexical_factor=1.0).route(question)
    assert [(d.id, d.score) for d in ranks_alone.ranked()] == [(d.id, d.score) for d in undamped.ranked()]
