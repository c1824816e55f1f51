"""Example questions blended into an entry's vector (knowledge/retrieval/dense.py, ``with_examples``)."""

from dataclasses import replace

import numpy as np
import pytest

from common.text import retrieval_embeddings
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.dense import (
    BLEND_MAX_LENGTH,
    DenseIndex,
    clean_questions,
    embedded_text,
    text_digest,
    with_examples,
)


def _vector(**coordinates):
    """A vector in the model's space with the given coordinates on the first axes (x, y, z, w)."""
    v = np.zeros(retrieval_embeddings.DIM, dtype=np.float32)
    for axis, value in coordinates.items():
        v["xyzw".index(axis)] = value
    return v


def test_a_blend_is_half_passage_half_the_questions_mean_and_shorter_than_a_passage():
    passage = _vector(x=1.0)
    questions = np.stack([_vector(y=1.0), _vector(x=0.6, y=0.8)])
    blended = with_examples(passage, questions)
    assert np.allclose(blended, 0.5 * passage + 0.5 * questions.mean(axis=0))
    assert np.linalg.norm(blended) < BLEND_MAX_LENGTH
    assert np.array_equal(with_examples(passage, np.zeros((0, retrieval_embeddings.DIM))), passage)
    dense = DenseIndex.from_rows([passage, blended])
    assert not dense.has_examples(0) and dense.has_examples(1)


def test_what_a_vector_stands_for_changes_with_its_questions_only():
    text = "Prazos. Quanto demora."
    assert embedded_text(text) == embedded_text(text, []) == text  # stored vectors keep their digest
    assert text_digest(embedded_text(text, ["Em quantos dias chega?"])) != text_digest(text)
    assert embedded_text(text, ["a?", "b?"]) != embedded_text(text, ["b?", "a?"])


def test_questions_are_trimmed_deduplicated_and_bounded():
    assert clean_questions("  Quanto  custa?\n\nquanto custa?\nE o prazo?") == ["Quanto custa?", "E o prazo?"]
    with pytest.raises(ValueError):
        clean_questions(["x" * 201])
    with pytest.raises(ValueError):
        clean_questions([f"pergunta {i}?" for i in range(13)])
    with pytest.raises(ValueError):
        clean_questions({"pt": []})


def _router(first: np.ndarray, config: RouterConfig | None = None) -> RouterIndex:
    """Three entries the question shares no word with; only their vectors can rank them."""
    entries = [
        Entry("FIRST", "Alfa", summary="Alfa.", body="Alfa alfa."),
        Entry("SECOND", "Beta", summary="Beta.", body="Beta beta."),
        Entry("THIRD", "Gama", summary="Gama.", body="Gama gama."),
    ]
    rows = [first, _vector(x=0.5, z=0.75**0.5), _vector(x=0.5, w=0.75**0.5)]
    dense = DenseIndex.from_rows(rows, embed_query=lambda text: _vector(x=1.0))
    return RouterIndex(entries, config=config or RouterConfig(), dense=dense)


# The question's cosines: FIRST 0.5975, the others 0.5, so FIRST stands 0.065 above the mean,
# above the full-body lift of an entry with example questions (0.05) and under a passage's (0.07).
SIM = 0.5975


def test_an_entry_with_example_questions_gets_its_full_body_at_its_own_lift():
    length = 0.92  # a blend's length (its questions' mean is shorter than a unit vector)
    blended = _vector(x=SIM, y=(length**2 - SIM**2) ** 0.5)
    assert DenseIndex.from_rows([blended]).has_examples(0)
    result = _router(blended).route("xyzzy plugh?")
    assert result.ranked()[0].id == "FIRST" and result.full_ids == ["FIRST"]
    # At the passages' lift the same cosines give no body: the examples' threshold decided it.
    strict = replace(RouterConfig(), dense_full_lift_examples=0.07)
    assert _router(blended, strict).route("xyzzy plugh?").full_ids == []


def test_a_passage_vector_keeps_the_passages_lift():
    passage = _vector(x=SIM, y=(1 - SIM**2) ** 0.5)  # unit length: no example questions
    result = _router(passage).route("xyzzy plugh?")
    assert result.ranked()[0].id == "FIRST" and result.full_ids == []
    loose = replace(RouterConfig(), dense_full_lift=0.06)
    assert _router(passage, loose).route("xyzzy plugh?").full_ids == ["FIRST"]


# ------------------------------------------- the closest example question (DenseIndex.attach_examples)


def test_an_entry_is_also_scored_by_its_closest_example_question():
    question = _vector(x=1.0)
    index = DenseIndex.from_rows(
        [_vector(x=0.5, y=0.75**0.5), _vector(x=0.6, z=0.8), _vector(x=0.5, w=0.75**0.5)],
        embed_query=lambda text: question,
    )
    # FIRST has two example questions, one worded as the question; THIRD one unrelated to it.
    index.attach_examples({2: _vector(z=1.0).tobytes(), 0: np.stack([_vector(y=1.0), _vector(x=1.0)]).tobytes()})
    assert index.similarities(question) == pytest.approx([0.5, 0.6, 0.5])
    assert index.similarities(question, 0.3) == pytest.approx([0.7 * 0.5 + 0.3 * 1.0, 0.6, 0.7 * 0.5])
    assert [i for i, _ in index.top_k(question, 3)[0]] == [1, 0, 2]
    ranked, mean = index.top_k(question, 3, 0.3)
    assert [i for i, _ in ranked] == [0, 1, 2] and mean == pytest.approx((0.65 + 0.6 + 0.35) / 3)


def test_the_closest_example_question_is_each_entrys_own():
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(6, retrieval_embeddings.DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = DenseIndex.from_rows(list(matrix))
    blocks = {5: rng.normal(size=(1, retrieval_embeddings.DIM)), 1: rng.normal(size=(4, retrieval_embeddings.DIM))}
    blocks[3] = rng.normal(size=(2, retrieval_embeddings.DIM))
    blocks = {slot: block.astype(np.float32) for slot, block in blocks.items()}
    # Rows of another model's width, and a slot past the entries, are not comparable: skipped.
    index.attach_examples({**blocks, 4: np.zeros(10, dtype=np.float32), 9: blocks[1]})
    assert index.example_slots.tolist() == [1, 3, 5]
    question = rng.normal(size=retrieval_embeddings.DIM).astype(np.float32)
    expected = matrix @ question
    for slot, block in blocks.items():
        expected[slot] = 0.5 * expected[slot] + 0.5 * (block @ question).max()
    assert index.similarities(question, 0.5) == pytest.approx(expected, rel=1e-5)


def test_a_question_worded_like_an_example_gets_its_entry_first_and_in_full():
    length = 0.92  # a blend: FIRST's cosine is no higher than the others'
    blended = _vector(x=0.5, y=(length**2 - 0.25) ** 0.5)
    plain = _router(blended, replace(RouterConfig(), dense_closest_example_share=0.0))
    plain.dense.attach_examples({0: np.stack([_vector(y=1.0), _vector(x=1.0)])})
    assert plain.route("xyzzy plugh?").full_ids == []
    mixed = _router(blended)
    mixed.dense.attach_examples({0: np.stack([_vector(y=1.0), _vector(x=1.0)])})
    result = mixed.route("xyzzy plugh?")
    assert result.ranked()[0].id == "FIRST" and result.full_ids == ["FIRST"]


# ------------------------------- a one-part message worded like an example question (shaping._agreed_full)

# FIRST's mixed cosine 0.5525 against the others' 0.5: lift 0.035, under the multi-part rule's 0.04 and
# the blended entries' full-body lift (0.05), so only its closest example question can give it a body.
MIXED = 0.5525
EXAMPLE_FULL = replace(RouterConfig(), agreed_example_cosine=0.86, agreed_example_lift=0.03)


def _worded_like(closest: float, config: RouterConfig = EXAMPLE_FULL) -> RouterIndex:
    """The router of ``_router`` with FIRST blended, one of its two example questions at ``closest``
    cosine with the question, and its blend set so that its mixed cosine stays ``MIXED``."""
    share = RouterConfig().dense_closest_example_share
    blend = (MIXED - share * closest) / (1 - share)
    index = _router(_vector(x=blend, y=(0.92**2 - blend**2) ** 0.5), config)
    index.dense.attach_examples({0: np.stack([_vector(x=closest, y=(1 - closest**2) ** 0.5), _vector(y=1.0)])})
    return index


def test_a_one_part_message_worded_like_an_example_question_gets_its_entry_in_full():
    index = _worded_like(0.9)
    assert index.dense.closest_example(_vector(x=1.0), 0) == pytest.approx(0.9)
    assert index.dense.closest_example(_vector(x=1.0), 1) is None
    result = index.route("xyzzy plugh?")
    first = result.ranked()[0]
    assert first.id == "FIRST" and result.full_ids == ["FIRST"]
    assert [n["detail"] for n in first.why if n["signal"] == "agreed_example"] == [
        "the best by meaning, close to an example question (0.900)"
    ]
    # Off (the shipped setting: leave-one-catalog-out found no held-out gain), the same cosines give none.
    shipped = _worded_like(0.9, replace(EXAMPLE_FULL, agreed_example_cosine=RouterConfig().agreed_example_cosine))
    assert shipped.route("xyzzy plugh?").full_ids == []


def test_an_example_question_further_away_or_a_lower_lift_gives_no_body():
    far = _worded_like(0.8)
    assert far.route("xyzzy plugh?").ranked()[0].id == "FIRST"
    assert far.route("xyzzy plugh?").full_ids == []
    near = _worded_like(0.9, replace(EXAMPLE_FULL, agreed_example_lift=0.04))
    assert near.route("xyzzy plugh?").full_ids == []


def test_a_part_of_a_longer_message_is_not_judged_by_its_example_questions():
    # (The whole message's closest entry has its own rule, shaping._message_full: held off here.)
    result = _worded_like(0.9, replace(EXAMPLE_FULL, message_full_lift_examples=9.0)).route(
        "xyzzy plugh? plover frotz?"
    )
    assert len(result.parts) == 2 and result.ranked()[0].id == "FIRST"
    assert result.full_ids == []
    # With it, the body comes from the whole message, never from the example questions.
    whole = _worded_like(0.9).route("xyzzy plugh? plover frotz?")
    assert whole.full_ids == ["FIRST"]
    assert {n["signal"] for n in whole.full[0].why} & {"agreed_example", "message_full"} == {"message_full"}
