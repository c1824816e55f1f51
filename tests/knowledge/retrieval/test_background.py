"""The background (docs/retrieval.md, "The background"): a message closer to a general question about
everyday life (knowledge/retrieval/data/background_questions.json) than to any entry of the catalog, by
``background_margin`` (``background_margin_examples`` for an entry with example questions), gets no full
body; what was found is listed, with a ``background`` reason.
"""

import json
from dataclasses import replace

import numpy as np
import pytest

from common.text import retrieval_embeddings
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.background import BACKGROUND_FILE, LANGUAGES, as_routed, background_questions
from knowledge.retrieval.dense import DenseIndex

OFF = replace(RouterConfig(), background_margin=9.0, background_margin_examples=9.0)


def test_the_background_is_150_questions_in_each_language_in_the_same_order():
    data = json.loads(BACKGROUND_FILE.read_text(encoding="utf-8"))
    assert sorted(data) == sorted(LANGUAGES)
    for lang in LANGUAGES:
        questions = data[lang]
        assert len(questions) == 150 and len(set(questions)) == 150
        assert all(isinstance(q, str) and q.strip() for q in questions)
    assert len(background_questions()) == 450


def test_a_background_question_is_embedded_as_the_router_embeds_a_message():
    # One part: the part's text (the final "?" dropped, as routing does); several: the whole message.
    assert as_routed("Vai chover amanhã?") == "Vai chover amanhã"
    two = "Vai chover amanhã? Preciso levar guarda-chuva?"
    assert as_routed(two) == two


# ------------------------------------------------------------------ the rule, on stand-in vectors


def _vector(x: float, axis: int, length: float = 1.0) -> np.ndarray:
    """A vector at cosine ``x`` with every question (the first axis), the rest on ``axis``; shorter than a
    unit one (``length`` < 1) for an entry that blends in example questions."""
    v = np.zeros(retrieval_embeddings.DIM, dtype=np.float32)
    v[0], v[axis] = x, (length**2 - x**2) ** 0.5
    return v


QUESTION = np.eye(1, retrieval_embeddings.DIM, dtype=np.float32)[0]  # every text's vector: the first axis


def _index(first: float, background: float | None, config: RouterConfig = RouterConfig(), length: float = 1.0):
    """PLOVER (its title word is the question's only word) at cosine ``first`` with every text, two
    others at 0.5, and one background question at cosine ``background`` (None: no background)."""
    question = QUESTION
    rows = [_vector(first, 1, length), _vector(0.5, 2, length), _vector(0.5, 3, length)]
    matrix = None if background is None else _vector(background, 4)[None, :]
    dense = DenseIndex.from_rows(rows, embed_query=lambda text: question, background=lambda: matrix)
    entries = [
        Entry("PLOVER", "Plover", summary="Plover.", body="Plover plover.", semantic_ids=("app.plover",)),
        Entry("GAMMA", "Gama", summary="Gama.", body="Gama gama.", semantic_ids=("app.gamma",)),
        Entry("DELTA", "Delta", summary="Delta.", body="Delta delta."),
    ]
    return RouterIndex(entries, config=config, dense=dense)


def test_a_message_closer_to_the_background_than_to_any_entry_gets_no_full_body():
    assert RouterConfig().background_margin == 0.09
    assert _index(0.6, None).route("plover?").full_ids == ["PLOVER"]  # no background
    assert _index(0.6, 0.68).route("plover?").full_ids == ["PLOVER"]  # 0.08 closer: under the margin
    result = _index(0.6, 0.7).route("plover?")  # 0.10 closer
    assert result.full_ids == [] and result.listed_ids[0] == "PLOVER"
    notes = [n["detail"] for n in result.listed[0].why if n["signal"] == "background"]
    assert notes == ["closer to a general question (0.700) than to any entry (0.600): listed"]
    assert _index(0.6, 0.7, OFF).route("plover?").full_ids == ["PLOVER"]


def test_entries_with_example_questions_have_their_own_margin():
    # A blend's cosines run otherwise: 0.05 for such entries (the closest entry decides which margin).
    assert RouterConfig().background_margin_examples == 0.05
    assert _index(0.6, 0.66, length=0.92).dense.has_examples(0)
    assert _index(0.6, 0.66, length=0.92).route("plover?").full_ids == []
    assert _index(0.6, 0.64, length=0.92).route("plover?").full_ids == ["PLOVER"]
    assert _index(0.6, 0.66).route("plover?").full_ids == ["PLOVER"]  # a passage vector: 0.09


def test_a_message_of_several_parts_is_judged_as_a_whole():
    assert _index(0.6, 0.7).route("xyzzy? plover?").full_ids == []
    assert _index(0.6, 0.68).route("xyzzy? plover?").full_ids == ["PLOVER"]
    # Read from its parts (KNOWLEDGE_MESSAGE_MEANING=parts: the message is not embedded), the parts' mean
    # vector is judged.
    assert _index(0.6, 0.7, replace(RouterConfig(), message_from_parts=True)).route("xyzzy? plover?").full_ids == []
    # Nor does the whole message's closest entry get its body (shaping._message_full, on for blends).
    assert _index(0.6, 0.66, OFF, length=0.92).route("xyzzy? frotz?").full_ids == ["PLOVER"]
    assert _index(0.6, 0.66, length=0.92).route("xyzzy? frotz?").full_ids == []


def test_the_ui_context_an_id_and_fetch_feedback_keep_their_bodies():
    index = _index(0.6, 0.7)
    assert index.route("plover?", focus="app.plover").full_ids == ["PLOVER"]  # the context answers it
    # The focus on another entry: the words still searched the catalog, the message is about the screen.
    assert "PLOVER" in index.route("plover?", focus="app.gamma").full_ids
    assert index.route("what is PLOVER?").full_ids == ["PLOVER"]
    assert index.route("plover?", feedback={"PLOVER": 1.0}).full_ids == ["PLOVER"]


def test_no_background_in_another_embedding_space():
    # A dense index whose questions a test's stand-in embeds has no background unless given one: the
    # router's background vectors are the router's model's.
    dense = DenseIndex.from_rows([_vector(0.6, 1)], embed_query=lambda text: QUESTION)
    assert dense.closest_background(QUESTION) is None
    assert _index(0.6, 0.7).dense.closest_background(QUESTION) == pytest.approx(0.7)


# ------------------------------------------------------------------ the router's own model


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the sentence-embedding models are not installed")
def test_a_sports_question_on_a_parcel_carrier_s_catalog_gets_no_full_body():
    # A logistics dev question: its words "ganhou … domingo … estadual" meet a regional delivery-times
    # article (BM25 coverage 0.42) whose meaning is first too, with a small lift. Closest background
    # question: 0.863; closest entry: 0.740 with example questions, 0.722 without.
    from knowledge.evaluation.tune import CATALOGS
    from knowledge.offline_catalog import example_questions_file, folder_index

    folder = CATALOGS / "logistics"
    examples = example_questions_file(folder / "example_questions.proposed.json")
    question = "Quem ganhou o clássico de domingo no campeonato estadual?"
    for given in (examples, None):
        assert folder_index(folder / "packages", OFF, examples=given).route(question).full_ids == [
            "PRAZOS_ENTREGA_REGIOES"
        ]
        result = folder_index(folder / "packages", RouterConfig(), examples=given).route(question)
        assert result.full_ids == [] and "PRAZOS_ENTREGA_REGIOES" in result.listed_ids
