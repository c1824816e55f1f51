"""The shared sentence-embedding model: meaning across wording and language, cache, off switch."""

import numpy as np
import pytest

from common.text import embeddings


def test_a_question_is_closer_to_its_translation_and_its_answer_than_to_an_unrelated_one():
    pt, en, es, other = embeddings.embed_queries(
        [
            "Quanto custa a extração de DNA?",
            "How much does DNA extraction cost?",
            "¿Cuánto cuesta la extracción de ADN?",
            "Qual é a previsão do tempo para amanhã?",
        ]
    )
    assert pt.shape == (embeddings.DIM,)
    assert np.isclose(np.linalg.norm(pt), 1.0, atol=1e-3)
    assert pt @ en > pt @ other
    assert pt @ es > pt @ other
    price, weather = embeddings.embed_passages(
        ["Tabela de preços da extração de DNA e do sequenciamento.", "Previsão do tempo e chuva."]
    )
    assert en @ price > en @ weather
    assert es @ price > es @ weather


def test_questions_are_cached_and_passages_are_not(monkeypatch):
    embeddings.clear_cache()
    first = embeddings.embed_query("Qual o prazo de entrega?")
    model = embeddings._model()
    calls = []
    monkeypatch.setattr(model, "query", lambda texts: calls.append(texts) or np.zeros((len(texts), 384)))
    again = embeddings.embed_query("Qual o prazo de entrega?")
    assert calls == []
    assert np.array_equal(first, again)
    embeddings.embed_query("outra pergunta")
    assert calls == [["outra pergunta"]]
    embeddings.clear_cache()


def test_switched_off_it_says_so_and_refuses(monkeypatch):
    monkeypatch.setenv("CONTEXTO_EMBEDDINGS", "off")
    assert embeddings.available() is False
    with pytest.raises(embeddings.EmbeddingsUnavailable):
        embeddings.embed_query("qualquer coisa")
    monkeypatch.setenv("CONTEXTO_EMBEDDINGS", "on")
    assert embeddings.available() is True


def test_empty_passage_list_gives_an_empty_matrix():
    assert embeddings.embed_passages([]).shape == (0, embeddings.DIM)


def test_a_long_question_is_cut_before_the_model_reads_it(monkeypatch):
    embeddings.clear_cache()
    model = embeddings._model()
    seen = []
    monkeypatch.setattr(model, "query", lambda texts: seen.extend(texts) or np.zeros((len(texts), 384)))
    embeddings.embed_query("prazo " * 2000)
    assert len(seen) == 1 and len(seen[0]) == embeddings.QUERY_MAX_CHARS
    embeddings.clear_cache()


def test_a_cached_question_does_not_wait_for_another_threads_model_call():
    import threading

    embeddings.clear_cache()
    cached = embeddings.embed_query("Qual o prazo de entrega?")
    got = []
    with embeddings._lock:  # another thread is inside the engine
        reader = threading.Thread(target=lambda: got.append(embeddings.embed_query("Qual o prazo de entrega?")))
        reader.start()
        reader.join(5)
        assert not reader.is_alive()
    assert np.array_equal(got[0], cached)
    embeddings.clear_cache()


def test_cached_passages_are_embedded_once_and_match_the_uncached_ones(monkeypatch):
    embeddings.clear_cache()
    texts = ["A palhada protege o solo.", "O calcário corrige a acidez."]
    first = embeddings.embed_passages_cached(texts)
    assert np.allclose(first, embeddings.embed_passages(texts))
    model = embeddings._model()
    calls = []
    monkeypatch.setattr(model, "passage", lambda ts: calls.append(list(ts)) or np.zeros((len(ts), 384)))
    again = embeddings.embed_passages_cached([texts[1], "um texto novo", texts[0], "um texto novo"])
    assert calls == [["um texto novo"]]  # only the new text, once
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])
    embeddings.clear_cache()
    embeddings.embed_passages_cached([texts[0]])
    assert calls[-1] == [texts[0]]
    embeddings.clear_cache()


def test_cached_passages_refuse_when_switched_off(monkeypatch):
    embeddings.clear_cache()
    embeddings.embed_passages_cached(["A palhada protege o solo."])
    monkeypatch.setenv("CONTEXTO_EMBEDDINGS", "off")
    with pytest.raises(embeddings.EmbeddingsUnavailable):
        embeddings.embed_passages_cached(["A palhada protege o solo."])
    embeddings.clear_cache()


def test_a_model_that_cannot_load_is_tried_once_and_stays_off():
    # Both encoders load through load_once: a missing wheel or unreadable weights must leave the
    # model off for the process (its users fall back to words), not retried on every question.
    import threading

    calls = []

    def broken():
        calls.append(1)
        raise ImportError("no wheel")

    state = {"model": None, "failed": False}
    lock = threading.Lock()
    assert embeddings.load_once(state, lock, broken, "m") is None
    assert embeddings.load_once(state, lock, broken, "m") is None
    assert calls == [1] and state["failed"] is True
    loaded = {"model": None, "failed": False}
    model = object()
    assert embeddings.load_once(loaded, lock, lambda: model, "m") is model
    assert embeddings.load_once(loaded, lock, lambda: object(), "m") is model
