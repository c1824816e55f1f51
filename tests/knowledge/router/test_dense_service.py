"""Stored passage vectors (knowledge/retrieval_embeddings.py) and question vectors in fetch feedback, through the database."""

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone

from common.text import embeddings as e5
from common.text import retrieval_embeddings
from knowledge.catalog import get_active_catalog
from knowledge.feedback import clear_feedback_snapshot
from knowledge.models import FetchFeedback, RevisionEmbedding
from knowledge.routing_service import fetch_feedback_record, index_holder, route_context
from knowledge.selectors import catalog_version_get

from .conftest import find

pytestmark = pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding model is required")


def _embed_catalog(capsys=None) -> str:
    call_command("embed_packages")
    return capsys.readouterr().out if capsys else ""


def test_a_saved_package_gets_its_vector_and_the_router_uses_it(
    catalog, make_package, settings, django_capture_on_commit_callbacks
):
    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    version = catalog_version_get()
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package(
            "GYM_BENEFIT",
            title="Academia e bem-estar",
            summary="Reembolso de academia e apoio psicológico.",
            keywords=["academia", "psicólogo"],
            body="A empresa reembolsa até R$ 150 por mês de academia e oferece sessões com psicólogo.",
        )
    stored = RevisionEmbedding.objects.get(revision__package=package)
    assert stored.model_id == retrieval_embeddings.MODEL_ID
    vector = np.frombuffer(bytes(stored.vector), dtype="<f4")
    assert vector.shape == (retrieval_embeddings.DIM,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-3
    assert catalog_version_get() > version  # every process rebuilds with the vector
    result = route_context(message="Does the company pay for my workouts?", use_cache=False)
    note = next(n for n in find(result, "GYM_BENEFIT").why if n["signal"] == "dense")
    assert note["rank"] == 1


def test_embed_packages_backfills_the_catalog_once(catalog, capsys):
    assert get_active_catalog().vectors == {}
    out = _embed_catalog(capsys)
    assert f"Embedded {len(catalog)} revision(s); 0 already had a vector." in out
    assert "Background questions: 450 vectors ready." in out  # the first route does not embed them
    assert len(get_active_catalog().vectors) == len(catalog)
    index, _ = index_holder.get()
    assert index.dense is not None and index.dense.present.all()
    assert "Embedded 0 revision(s)" in _embed_catalog(capsys)


def test_with_embeddings_off_nothing_is_computed_and_the_router_goes_without(catalog, capsys, monkeypatch):
    monkeypatch.setenv("CONTEXTO_EMBEDDINGS", "off")
    assert "nothing computed" in _embed_catalog(capsys)
    assert not RevisionEmbedding.objects.exists()
    index, _ = index_holder.get()
    assert index.dense is None


def test_stored_vectors_are_ignored_with_embeddings_off(catalog, monkeypatch):
    _embed_catalog()
    monkeypatch.setenv("CONTEXTO_EMBEDDINGS", "off")
    index_holder.clear()
    index, _ = index_holder.get()
    assert index.dense is None


def _record(django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        return fetch_feedback_record(**kwargs)


@pytest.mark.parametrize(
    "asked,paraphrase,fetched",
    [
        # Same language, other words: "tempo leva" / "prazo" (term Jaccard 1/3, top entries overlap 0.2).
        ("Quanto tempo leva o sequenciamento Sanger?", "Qual o prazo do sequenciamento Sanger?", "PRICING_RULES"),
        # Another language: no shared word at all.
        ("Como faço a coleta de amostra de solo?", "How do I collect a soil sample?", "SAMPLE_INSTRUCTIONS"),
    ],
)
def test_feedback_carries_over_to_a_paraphrase_by_the_meaning_of_the_questions(
    catalog, settings, django_capture_on_commit_callbacks, asked, paraphrase, fetched
):
    assert fetched not in route_context(message=paraphrase).full_ids
    rows = _record(django_capture_on_commit_callbacks, query=asked, package_id=fetched, was_listed=True)
    assert rows and rows[0].question_vector, rows
    after = route_context(message=paraphrase)
    assert fetched in after.full_ids
    assert any(n["signal"] == "feedback" for n in find(after, fetched).why)
    # The router's own signature alone does not relate them: the question vectors do.
    settings.KNOWLEDGE_FEEDBACK_VECTOR_SIMILARITY = 1.01
    assert fetched not in route_context(message=paraphrase, use_cache=False).full_ids


def test_close_question_vectors_do_not_carry_feedback_to_another_need(catalog, django_capture_on_commit_callbacks):
    # "custa" and "prazo" about the same product: cosine 0.95, but their best entries differ.
    _record(django_capture_on_commit_callbacks, query="Quanto custa o Sanger?", package_id="SAMPLE_INSTRUCTIONS")
    assert FetchFeedback.objects.filter(question_vector__isnull=False).exists()
    assert "SAMPLE_INSTRUCTIONS" not in route_context(message="Qual o prazo do Sanger?").full_ids


def test_a_save_stays_saved_when_its_embedding_cannot_be_queued(
    catalog, make_package, settings, django_capture_on_commit_callbacks, monkeypatch
):
    # The broker is down (or the eager task fails): the committed revision must not turn into an error.
    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    from knowledge import tasks

    def broker_down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(tasks.embed_revision, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("BROKER_DOWN", title="Pacote salvo", body="Texto do pacote salvo.")
    assert package.pk and not RevisionEmbedding.objects.filter(revision__package=package).exists()
    call_command("embed_packages")  # the backfill catches up
    assert RevisionEmbedding.objects.filter(revision__package=package).exists()


class _CountingEngine:
    def __init__(self, engine):
        self.engine = engine
        self.queries: list[str] = []

    def query(self, texts):
        self.queries += list(texts)
        return self.engine.query(texts)

    def passage(self, texts):
        return self.engine.passage(texts)


@pytest.fixture
def engine(monkeypatch):
    counting = _CountingEngine(e5._model())  # e5's engine: every router vector has an e5 half
    monkeypatch.setitem(e5._state, "model", counting)
    monkeypatch.setattr(e5, "_QUERY_CACHE_SIZE", 0)  # no cache: every embedding is an engine call
    monkeypatch.setattr(retrieval_embeddings, "_QUERY_CACHE_SIZE", 0)
    retrieval_embeddings.clear_cache()
    yield counting
    retrieval_embeddings.clear_cache()


def test_the_carry_over_uses_the_vector_the_router_already_has(
    catalog, settings, django_capture_on_commit_callbacks, engine
):
    _embed_catalog()
    settings.KNOWLEDGE_DENSE_GATE = "always"
    asked, paraphrase = "Como faço a coleta de amostra de solo?", "How do I collect a soil sample?"
    _record(django_capture_on_commit_callbacks, query=asked, package_id="SAMPLE_INSTRUCTIONS", was_listed=True)
    engine.queries.clear()
    result = route_context(message=paraphrase, use_cache=False)
    assert "SAMPLE_INSTRUCTIONS" in result.full_ids  # carried over by the question vectors' cosine
    assert any(n["signal"] == "feedback" for n in find(result, "SAMPLE_INSTRUCTIONS").why)
    assert engine.queries == ["How do I collect a soil sample"]  # the dense signal's embedding, once


def test_a_lexically_answered_question_is_not_embedded_for_a_row_its_ranking_already_relates(
    catalog, settings, django_capture_on_commit_callbacks, engine
):
    _embed_catalog()
    # A gate that skips the embedding (the default embeds every part): feedback must not embed either.
    settings.KNOWLEDGE_DENSE_GATE = "covered"
    question = "Quanto custa o sequenciamento Sanger?"
    engine.queries.clear()
    before = route_context(message=question, use_cache=False)
    assert engine.queries == []  # the gate: BM25's best is strong, the dense signal does not embed
    ranking = before.part_rankings[0]
    # feedback learnt on another wording with the same router reading (signature = this ranking)
    FetchFeedback.objects.create(
        query_key="valor sequenc sanger",
        package_id=ranking[1],
        weight=1.0,
        signature=ranking,
        question_vector=np.ones(retrieval_embeddings.DIM, dtype="<f4").tobytes(),
        question_vector_model=retrieval_embeddings.MODEL_ID,
        last_fetched_at=timezone.now(),
        seq=1,
    )
    clear_feedback_snapshot()
    after = route_context(message=question, use_cache=False)
    assert any(n["signal"] == "feedback" for n in find(after, ranking[1]).why)
    assert engine.queries == []  # the signature relates them: the question's vector is not needed


def test_the_sweep_embeds_what_a_lost_task_or_a_model_upgrade_left_without_a_vector(
    catalog, make_package, settings, django_capture_on_commit_callbacks, monkeypatch
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge import tasks
    from knowledge.embeddings import embedding_sweep

    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    _embed_catalog()
    # nothing missing: one query, nothing embedded
    with CaptureQueriesContext(connection) as captured:
        assert embedding_sweep() == {"embedded": 0, "missing": 0, "unavailable": 0}
    assert len(captured.captured_queries) == 1
    # a save whose task never reached a worker
    monkeypatch.setattr(tasks.embed_revision, "delay", lambda *a, **k: None)
    with django_capture_on_commit_callbacks(execute=True):
        lost = make_package("LOST_TASK", title="Pacote salvo", body="Texto do pacote salvo.")
    # and a vector of another model (what every revision holds right after an upgrade)
    other = RevisionEmbedding.objects.exclude(revision__package=lost).first()
    RevisionEmbedding.objects.filter(pk=other.pk).update(model_id="another-model@1")
    result = tasks.embedding_sweep_run.apply().get()  # the task beat runs
    assert result == {"embedded": 2, "missing": 2, "unavailable": 0}
    assert RevisionEmbedding.objects.get(revision__package=lost).model_id == retrieval_embeddings.MODEL_ID
    assert RevisionEmbedding.objects.get(revision=other.revision).model_id == retrieval_embeddings.MODEL_ID
    assert embedding_sweep()["embedded"] == 0  # idempotent


def test_the_sweep_is_scheduled_only_with_embedding_on_save(settings):
    from knowledge.embeddings import embedding_sweep

    assert settings.CELERY_BEAT_SCHEDULE["knowledge-embedding-sweep"]["task"] == "knowledge.embedding_sweep"
    settings.KNOWLEDGE_EMBED_ON_SAVE = False  # vectors come only from `embed_packages` then
    assert embedding_sweep() == {"embedded": 0, "missing": 0, "unavailable": 1}
