"""A keyword or BM25 hit below the full-body threshold keeps a quarter of its rank's fused score (issue 12).

A paraphrase shares a few common words with some other entry; at full weight that weak match tied or beat
the entry the question's meaning points at. ``weak_lexical_factor`` (0.25) was chosen by
leave-one-catalog-out over the ten dev splits (docs/retrieval.md, "Weak lexical hits").
"""

from dataclasses import replace

import pytest

from common.text import retrieval_embeddings
from knowledge.evaluation.tune import CATALOGS, dense_of
from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import RouterConfig, RouterIndex
from knowledge.retrieval.fusion import DEFAULT_RRF_K, DEFAULT_WEIGHTS
from django.conf import settings

SAMPLE = settings.BASE_DIR / "knowledge" / "catalog"


def _delivered(result, package_id):
    return next(d for d in result.ranked() if d.id == package_id)


def test_a_weak_lexical_hit_keeps_a_quarter_of_its_ranks_share_and_stays_listed():
    entries = load_package_folder(SAMPLE)
    question = "amostra congelada prazo"  # "prazo" is a DELIVERY_TIMELINES keyword, 0.14 of the question
    full_weight = RouterIndex(entries, config=replace(RouterConfig(), weak_lexical_factor=1.0)).route(question)
    shipped = RouterIndex(entries).route(question)
    step = DEFAULT_WEIGHTS["keyword"] / (DEFAULT_RRF_K + 1)  # keyword rank 1
    assert _delivered(full_weight, "DELIVERY_TIMELINES").score == pytest.approx(step)
    weak = _delivered(shipped, "DELIVERY_TIMELINES")
    assert weak.score == pytest.approx(0.25 * step)
    assert weak.shape == "listed" and [n["signal"] for n in weak.why] == ["keyword"]
    # A strong hit (all of the question, eligible for full) keeps its whole share.
    strong = _delivered(shipped, "GOSOLOS_SAMPLING")
    assert strong.shape == "full" and strong.score == pytest.approx(DEFAULT_WEIGHTS["bm25"] / (DEFAULT_RRF_K + 1))


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
@pytest.mark.parametrize(
    "catalog, question, expected, outvoted_by",
    [
        ("saas", "¿Puedo cobrar un recargo a quien paga después del vencimiento?", "LATE_FEES", "BOLETO_PAYMENT"),
        ("hr", "How long is the notice period when someone leaves the company?", "OFFBOARDING", "PERFORMANCE_REVIEW"),
    ],
)
def test_a_paraphrase_reaches_the_entry_its_meaning_points_at(catalog, question, expected, outvoted_by):
    # Dev-split questions: their common words matched another entry weakly.
    entries = load_package_folder(CATALOGS / catalog / "packages")
    dense = dense_of(catalog, entries)
    full_weight = RouterIndex(entries, config=replace(RouterConfig(), weak_lexical_factor=1.0), dense=dense)
    undamped = {d.id: d.score for d in full_weight.route(question).ranked()}
    # Undamped, the weak match ties or beats the entry the meaning points at (a tie then goes to the
    # closer meaning, shaping._best_first; it used to go to catalog position).
    assert undamped[outvoted_by] >= undamped[expected]
    damped = RouterIndex(entries, dense=dense).route(question).ranked()
    assert damped[0].id == expected and damped[0].score > damped[1].score


def test_the_setting_overrides_the_factor(settings):
    from knowledge.routing_service import router_config

    assert router_config().weak_lexical_factor == 0.25
    settings.KNOWLEDGE_WEAK_LEXICAL_FACTOR = 1.0  # ranks alone, as before
    assert router_config().weak_lexical_factor == 1.0


def test_the_ranking_before_feedback_is_damped_as_the_route_is():
    # A paraphrase's fetch feedback is matched on the part's ranking before feedback
    # (knowledge/feedback.py): it must be the order the route gives, not the undamped one.
    entries = load_package_folder(SAMPLE)
    seen = []
    RouterIndex(entries).route(
        "amostra congelada prazo", related_feedback=lambda part, ranking: seen.append(ranking) or {}
    )
    assert seen == [["GOSOLOS_SAMPLING", "KITS_BS_DIAGNOSTICA", "DELIVERY_TIMELINES"]]
