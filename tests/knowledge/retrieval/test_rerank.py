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
