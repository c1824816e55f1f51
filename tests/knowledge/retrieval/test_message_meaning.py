"""A message of several parts also ranks the entries closest in meaning to the whole message (issue 12).

The splitter routes each sentence or clause as a part, so a context sentence and the question after it
("My dog just ate rat poison. Should I make him throw up…?") are two parts, and neither alone says what
the message means. The whole message is embedded once more and its dense top entries are added to the
merged ranking at weight ``message`` (3), and the closest one ranked once more at weight ``message_top``
(1): rank only, never a full body. Chosen by leave-one-catalog-out over the twelve dev splits
(docs/retrieval.md, "The whole message's meaning", "The whole message's closest entry"). The questions
below are dev-split questions.
"""

from dataclasses import replace

import pytest

from common.text import retrieval_embeddings
from knowledge.evaluation.tune import CATALOGS, dense_of
from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import RouterConfig, RouterIndex
from knowledge.retrieval.dense import DenseIndex
from knowledge.retrieval.fusion import DEFAULT_RRF_K, DEFAULT_WEIGHTS

pytestmark = pytest.mark.skipif(
    not retrieval_embeddings.available(), reason="the bundled embedding models are required"
)

OFF = {**DEFAULT_WEIGHTS, "message": 0.0}
# The whole message's ranking without its closest entry's second share: the ranking's own effect.
RANKING_ONLY = {**DEFAULT_WEIGHTS, "message_top": 0.0}


def _index(catalog, **config):
    entries = load_package_folder(CATALOGS / catalog / "packages")
    return RouterIndex(entries, config=replace(RouterConfig(), **config), dense=dense_of(catalog, entries))


def _put_first(catalog, question, expected, before_weights, after_weights):
    """The message routed with each set of weights: the entry is first only with the second, and the
    full bodies are the same (rank only: they are the parts' own). Returns the first delivery and the
    scores before."""
    before = _index(catalog, weights=before_weights).route(question)
    after = _index(catalog, weights=after_weights).route(question)
    assert len(after.parts) > 1
    assert before.ranked()[0].id != expected
    first = after.ranked()[0]
    assert first.id == expected
    assert set(after.full_ids) == set(before.full_ids)
    return first, {d.id: d.score for d in before.ranked()}


@pytest.mark.parametrize(
    "catalog, question, expected",
    [
        (
            "vet",
            "Mi perro acaba de comer veneno para ratas. ¿Lo hago vomitar con agua y sal mientras voy al veterinario?",
            "PRIMEIROS_SOCORROS_CASA",
        ),
        ("hr", "Me sentí mal, fui a urgencias y perdí el día; ¿qué hago para que no me lo descuenten?", "SICK_NOTES"),
        (
            "logistics",
            "The box showed up all crushed and the ceramic vase inside is broken. What do I do now?",
            "ENCOMENDA_AVARIADA",
        ),
    ],
)
def test_the_whole_message_puts_first_the_entry_it_means(catalog, question, expected):
    first, before = _put_first(catalog, question, expected, OFF, RANKING_ONLY)
    notes = [n for n in first.why if n["signal"] == "message"]
    assert len(notes) == 1 and "part" not in notes[0]
    # Its rank's share is added to the entry's best score over the parts.
    step = DEFAULT_WEIGHTS["message"] / (DEFAULT_RRF_K + notes[0]["rank"])
    assert first.score == pytest.approx(before.get(expected, 0.0) + step)


@pytest.mark.parametrize(
    "catalog, question, expected",
    [
        (
            # (The vet catalog's "Meu cachorro comeu chumbinho agora…" was the example here: its first part
            # ties two entries' cosines within 0.001, and on another CPU's float arithmetic it stays second.)
            "insurance",
            "Estourou um cano no banheiro e a água está descendo pela escada. Vocês mandam alguém agora, de madrugada?",
            "ASSISTENCIA_24H_RESIDENCIAL",
        ),
        (
            "condominio",
            "Tengo dos coches y un solo lugar para dejarlos abajo. ¿Puedo pagarle a un vecino para usar el suyo?",
            "ALUGUEL_VAGA",
        ),
    ],
)
def test_the_whole_message_s_closest_entry_is_ranked_once_more(catalog, question, expected):
    # The ranking alone leaves the entry second; its first-rank share once more (message_top) puts it first.
    first, before = _put_first(catalog, question, expected, RANKING_ONLY, DEFAULT_WEIGHTS)
    tops = [n for n in first.why if n["signal"] == "message_top"]
    assert len(tops) == 1 and "part" not in tops[0]
    assert [n["rank"] for n in first.why if n["signal"] == "message"] == [1]
    assert first.score == pytest.approx(before[expected] + DEFAULT_WEIGHTS["message_top"] / (DEFAULT_RRF_K + 1))
    # Only the closest entry gets it.
    on = _index(catalog).route(question)
    assert sum(n["signal"] == "message_top" for d in on.ranked() for n in d.why) == 1
    # With the whole message's meaning off there is no closest entry to rank again.
    off = _index(catalog, weights={**OFF, "message_top": 1.0}).route(question)
    assert not any(n["signal"].startswith("message") for d in off.ranked() for n in d.why)


def test_the_whole_message_is_embedded_once_and_only_when_it_has_several_parts(monkeypatch):
    calls = []
    original = DenseIndex.query_vector
    monkeypatch.setattr(DenseIndex, "query_vector", lambda self, text: calls.append(text) or original(self, text))
    index = _index("logistics")
    index.route("The ceramic vase inside the box arrived broken.")
    assert len(calls) == 1  # one part: its own vector is the message's
    calls.clear()
    message = "The box showed up all crushed and the ceramic vase inside is broken. What do I do now?"
    index.route(message)
    assert len(calls) == 3 and calls[-1] == message  # each part, then the whole message
    calls.clear()
    _index("logistics", weights=OFF).route(message)
    assert len(calls) == 2  # off: the parts only
    calls.clear()
    _index("logistics", weights={**DEFAULT_WEIGHTS, "dense": 0.0}).route(message)
    assert calls == []  # the dense signal off: no part embedded, nor the message


def test_a_message_the_cascade_answered_in_part_is_not_embedded_whole(monkeypatch):
    calls = []
    original = DenseIndex.query_vector
    monkeypatch.setattr(DenseIndex, "query_vector", lambda self, text: calls.append(text) or original(self, text))
    index = _index("logistics")
    message = "ENCOMENDA_AVARIADA. How long do you keep a parcel at the pickup point?"
    result = index.route(message)
    assert result.cascade == [True, False]
    assert len(calls) == 1  # the named part is the cascade's; only the other part is embedded
    assert not any(n["signal"] == "message" for d in result.ranked() for n in d.why)


def test_the_message_can_be_read_from_its_parts_without_another_embedding(monkeypatch):
    # message_from_parts (KNOWLEDGE_MESSAGE_MEANING=parts): the mean of the parts' cosines, that is the
    # cosine with the parts' mean vector up to a factor the ranking ignores.
    calls = []
    original = DenseIndex.query_vector
    monkeypatch.setattr(DenseIndex, "query_vector", lambda self, text: calls.append(text) or original(self, text))
    question = "The box showed up all crushed and the ceramic vase inside is broken. What do I do now?"
    index = _index("logistics", message_from_parts=True)
    result = index.route(question)
    assert len(calls) == 2  # the parts only
    first = result.ranked()[0]
    assert first.id == "ENCOMENDA_AVARIADA" and any(n["signal"] == "message" for n in first.why)
    assert _index("logistics", weights=OFF, message_from_parts=True).route(question).ranked()[0].id != first.id
