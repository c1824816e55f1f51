"""The learned re-ranker (measured, off by default): it learns, and when configured it reorders a part."""

import numpy as np

from knowledge.retrieval import rerank
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.signals import route_part

ENTRIES = [
    Entry("PRAZOS", "Prazos de entrega", "Quanto tempo leva.", keywords=("prazo",), body="O prazo do Sanger: 5 dias."),
    Entry("PRECOS", "Tabela de preços", "Quanto custa.", keywords=("preço",), body="Sanger: R$ 30, prazo curto."),
]


def test_fit_separates_what_it_is_shown():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, rerank.N_FEATURES))
    y = (x[:, 2] > 0).astype(float)  # coverage decides
    weights = rerank.fit(x, y)
    assert len(weights) == rerank.N_FEATURES + 1
    assert ((rerank.apply(weights, x) > 0.5) == (y > 0)).mean() > 0.95
    assert weights[2] == max(weights[:-1])


def test_configured_weights_reorder_the_part_and_collecting_reads_features():
    question = "Qual o prazo do Sanger?"
    plain = RouterIndex(ENTRIES).route(question)
    assert plain.ranked()[0].id == "PRAZOS"
    index = RouterIndex(ENTRIES)
    index.collect_features = True
    outcome = route_part(index, question, focus=None, parents=(), page=None, feedback={})
    assert all(f.shape == (rerank.N_FEATURES,) for f in outcome.features.values())
    # A model that prefers the lower-ranked candidate (feature 1 = 1/(1+rank), negative weight) flips the order.
    weights = tuple([0.0, -20.0] + [0.0] * (rerank.N_FEATURES - 2) + [10.0])
    flipped = RouterIndex(ENTRIES, config=RouterConfig(rerank_weights=weights)).route(question)
    assert flipped.ranked()[0].id == "PRECOS"


def test_listwise_fit_puts_each_parts_expected_candidate_first():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, rerank.N_FEATURES))
    starts = np.arange(0, 300, 10)  # 30 parts of 10 candidates
    y = np.zeros(300)
    for s in starts:
        y[s + int(np.argmax(x[s : s + 10, 3]))] = 1.0  # the candidate with the highest feature 3 is expected
    weights = rerank.fit_listwise(x, y, starts)
    assert weights[-1] == 0.0 and weights[3] == max(weights[:-1])
    scores = x @ np.asarray(weights[:-1])
    assert all(y[s + int(np.argmax(scores[s : s + 10]))] for s in starts)


def test_the_model_can_add_and_veto_full_bodies_but_never_a_named_entry():
    features = {0: np.zeros(rerank.N_FEATURES), 1: np.ones(rerank.N_FEATURES)}
    weights = tuple([1.0] * rerank.N_FEATURES + [-2.0])  # candidate 0: p = 0.12; candidate 1: p ≈ 1
    entries = [Entry("A", "a"), Entry("B", "b")]

    def run(why, eligible, full_probability=0.9, **kwargs):
        fused, eligible = {0: 1.0, 1: 0.5}, set(eligible)
        rerank.rerank_part(fused, eligible, why, features, weights, full_probability, entries, **kwargs)
        return fused, eligible

    fused, eligible = run({}, {0})
    assert fused[1] > fused[0] and eligible == {0, 1}  # reordered; B added (p ≥ 0.9); A kept (no veto)
    assert run({}, {0}, veto_probability=0.5)[1] == {1}  # A vetoed
    assert run({0: [("id", 1, "named")]}, {0}, veto_probability=0.5)[1] == {0, 1}  # named: kept
    fused, eligible = run({}, {0}, reorder=False, full_probability=1.1)
    assert fused == {0: 1.0, 1: 0.5} and eligible == {0}


def test_replaying_part_outcomes_gives_what_routing_gives():
    """tune.Routed (route once, replay each re-ranker candidate) is the router's own result."""
    from knowledge.evaluation import tune
    from knowledge.offline_catalog import load_package_folder

    entries = load_package_folder(tune.TUNING_INPUTS["sample"][0])
    queries = tune.tuning_questions("sample")
    routed = tune.Routed(RouterConfig(), "sample", entries, queries)

    def outcomes(report):
        return [(o.hit, o.usable, o.full, o.ranked) for o in report.outcomes]

    assert outcomes(routed.report()) == outcomes(tune.run(RouterConfig(), "sample", entries, queries))
    # A model that prefers low coverage (feature 2): it reorders, adds and vetoes full bodies.
    weights = tuple([0.0, 0.0, -6.0] + [0.0] * (rerank.N_FEATURES - 3) + [2.0])
    config = RouterConfig(rerank_weights=weights, rerank_full_probability=0.9, rerank_veto_probability=0.3)
    replayed = routed.report(weights, full_probability=0.9, veto=0.3)
    assert outcomes(replayed) != outcomes(routed.report())
    assert outcomes(replayed) == outcomes(tune.run(config, "sample", entries, queries))


def test_replaying_gives_what_routing_gives_where_the_background_takes_bodies():
    """The same on a catalog where some messages are closer to the background than to any entry."""
    from knowledge.evaluation import tune
    from knowledge.offline_catalog import load_package_folder

    entries = load_package_folder(tune.TUNING_INPUTS["mercado"][0])
    queries = tune.tuning_questions("mercado")
    routed = tune.Routed(RouterConfig(), "mercado", entries, queries)
    assert any(v is not None for v in routed.verdicts)  # "Is it going to rain this weekend? …" among them
    full = [(o.hit, o.usable, o.full, o.ranked) for o in routed.report().outcomes]
    assert full == [(o.hit, o.usable, o.full, o.ranked) for o in tune.run(RouterConfig(), "mercado").outcomes]
