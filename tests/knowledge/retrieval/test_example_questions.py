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
# between the full-body lift of an entry with example questions (0.06) and of a passage (0.07).
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
