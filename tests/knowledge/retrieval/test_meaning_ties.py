"""A tie of fused scores goes to the entry closer in meaning to the question (shaping._best_first).

Fused scores are sums of rank shares, so an entry first in BM25 and another first by meaning, both
weighted 2, tie exactly; catalog position used to decide which one the agent saw first.
"""

from dataclasses import replace

import numpy as np

from knowledge.evaluation.tune import CATALOGS
from knowledge.offline_catalog import example_questions_file, folder_index
from knowledge.retrieval import RouterConfig
from knowledge.retrieval.shaping import _best_first, _meaning
from knowledge.retrieval.signals import PartOutcome


def test_ties_go_to_meaning_then_position():
    scores = {0: 1.0, 1: 1.0, 2: 0.5, 3: 1.0}
    meaning = np.array([0.1, 0.9, 0.95, 0.1], dtype=np.float32)
    assert _best_first(scores, meaning) == [1, 0, 3, 2]  # 0 and 3 tie in meaning too: position
    assert _best_first(scores, None) == [0, 1, 3, 2]  # a part not embedded: position, as before


def test_a_message_of_several_parts_reads_each_entry_closest_cosine():
    def part(meaning):
        return PartOutcome("", "", False, {}, set(), {}, 0.0, meaning=meaning)

    first, second = np.array([0.2, 0.8]), np.array([0.7, 0.1])
    assert _meaning([part(first), part(None), part(second)]).tolist() == [0.7, 0.8]
    assert _meaning([part(None)]) is None


def test_a_paraphrase_tied_with_a_neighbour_comes_first_by_its_meaning():
    # A dev question of the energy catalog: the restoration-times article (BM25) and the compensation
    # article (meaning) tie; position put restoration first. (Two parts: the whole message's meaning,
    # shipped since, adds its own ranking and the tie is gone; it is held off to show the tie.)
    folder = CATALOGS / "energia"
    config = replace(RouterConfig(), weights={**RouterConfig().weights, "message": 0.0})
    index = folder_index(
        folder / "packages", config, examples=example_questions_file(folder / "example_questions.proposed.json")
    )
    question = "I was left in the dark at home for almost two days last month. Do I get any money knocked off for that?"
    ranked = index.route(question).ranked()
    assert [d.id for d in ranked[:2]] == ["COMPENSACAO_INTERRUPCOES", "PRAZOS_RESTABELECIMENTO"]
    assert ranked[0].score == ranked[1].score
