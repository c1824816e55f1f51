"""The cascade: exact hits answer without scoring the whole corpus."""

import pytest

from knowledge.routing_service import index_holder, route_context


@pytest.fixture
def no_corpus_scan(catalog, monkeypatch):
    index, _ = index_holder.get()

    def forbidden(*args, **kwargs):
        raise AssertionError("the whole corpus was scored")

    monkeypatch.setattr(index.bm25, "top_k", forbidden)
    return index


def test_a_named_id_answers_without_scoring_the_corpus(no_corpus_scan):
    result = route_context(message="PRICING_RULES")
    assert result.cascade == [True]
    assert result.full_ids[0] == "PRICING_RULES"


def test_a_named_alias_with_words_it_covers_answers_from_the_cascade(no_corpus_scan):
    result = route_context(message="desconto na TABELA_DE_PRECOS")
    assert result.cascade == [True]
    assert result.full_ids == ["PRICING_RULES"]
    note = next(n for n in result.full[0].why if n["signal"] == "bm25")
    assert "cascade" in note["detail"]


def test_a_semantic_focus_with_a_referential_message_answers_from_the_cascade(no_corpus_scan):
    result = route_context(message="Explique isso.", semantic_context={"focus": "quote.discount"})
    assert result.cascade == [True]
    assert result.full_ids == ["PRICING_RULES"]


def test_content_the_exact_hit_does_not_cover_falls_through_to_bm25(catalog):
    result = route_context(message="Quais alvos de qPCR vocês detectam?", semantic_context={"focus": "quote.discount"})
    assert result.cascade == [False]
    assert "TARGETS_QPCR" in result.full_ids
