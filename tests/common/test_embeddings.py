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
