"""Example questions through the database: proposed with the search terms, accepted in the admin,
blended into the revision's stored vector (knowledge/search_terms.py, knowledge/embeddings.py)."""

import json

import numpy as np
import pytest

from common.text import retrieval_embeddings
from knowledge import search_terms
from knowledge.embeddings import revision_text
from knowledge.models import RevisionEmbedding, RevisionSearchTerms
from knowledge.retrieval.dense import embedded_text, text_digest, with_examples
from knowledge.selectors import catalog_version_get

from .test_search_terms import BODY, configured_model

QUESTIONS = {
    "pt": ["Faltei porque passei mal, onde mando o papel do médico?"],
    "en": ["I was off sick, where do I send the doctor's paper?"],
    "es": ["Falté por enfermedad, ¿dónde mando el papel del médico?"],
}
FLAT = [q for lang in ("pt", "en", "es") for q in QUESTIONS[lang]]


@pytest.fixture
def model(monkeypatch):
    reply = {"en": ["doctor's note"], "es": ["certificado médico"], "questions": QUESTIONS}
    return configured_model(monkeypatch, json.dumps(reply))


@pytest.fixture(autouse=True)
def _on(settings):
    settings.KNOWLEDGE_SEARCH_TERMS_ON_SAVE = True


def test_the_proposal_carries_example_questions_per_language():
    proposal = search_terms.parse_proposal(
        json.dumps({"en": ["sick note"], "questions": {"pt": ["  Onde  mando?", "x" * 300], "fr": ["Où?"]}})
    )
    assert proposal == {"en": ["sick note"], "es": [], "questions": {"pt": ["Onde mando?"], "en": [], "es": []}}
    # Questions alone are a usable answer; terms alone still are (no "questions" key then).
    assert search_terms.parse_proposal(json.dumps({"questions": {"es": ["¿Dónde?"]}}))["es"] == []
    assert "questions" not in search_terms.parse_proposal(json.dumps({"en": ["sick note"]}))
    assert '"questions"' in search_terms.SYSTEM_PROMPT


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_accepted_questions_are_blended_into_the_revision_vector(
    make_package, django_capture_on_commit_callbacks, model, client, curator, settings
):
    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    revision = package.revisions.get()
    record = RevisionSearchTerms.objects.get(revision=revision)
    assert record.proposed["questions"] == QUESTIONS
    passage = RevisionEmbedding.objects.get(revision=revision)
    assert passage.text_digest == text_digest(revision_text(revision))  # no questions accepted yet

    client.force_login(curator)
    page = client.get(f"/admin/knowledge/revisionsearchterms/{record.pk}/change/").content.decode()
    assert "3 example questions" in page and "onde mando o papel do médico?" in page
    version = catalog_version_get()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/admin/knowledge/revisionsearchterms/{record.pk}/change/",
            {"accepted": "doctor's note", "accepted_questions": "\n".join(FLAT)},
        )
    assert response.status_code == 302
    record.refresh_from_db()
    assert record.status == "accepted" and record.accepted_questions == FLAT
    stored = RevisionEmbedding.objects.get(revision=revision)
    assert stored.text_digest == text_digest(embedded_text(revision_text(revision), FLAT))
    vector = np.frombuffer(bytes(stored.vector), dtype="<f4")
    expected = with_examples(
        np.frombuffer(bytes(passage.vector), dtype="<f4"), retrieval_embeddings.embed_queries(FLAT)
    )
    assert np.allclose(vector, expected, atol=1e-5) and np.linalg.norm(vector) < 0.99
    assert catalog_version_get() > version

    # Accepting the same questions again (terms edited) embeds nothing.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/admin/knowledge/revisionsearchterms/{record.pk}/change/",
            {"accepted": "doctor's note, sick note", "accepted_questions": "\n".join(FLAT)},
        )
    assert RevisionEmbedding.objects.get(revision=revision).pk == stored.pk


def test_a_question_too_long_is_refused_in_the_admin_and_nothing_is_saved(
    make_package, django_capture_on_commit_callbacks, model, client, curator
):
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    record = RevisionSearchTerms.objects.get(revision__package=package)
    client.force_login(curator)
    response = client.post(
        f"/admin/knowledge/revisionsearchterms/{record.pk}/change/",
        {"accepted": "doctor's note", "accepted_questions": "x" * 201},
    )
    assert response.status_code == 200 and "at most 200 characters" in response.content.decode()
    record.refresh_from_db()
    assert record.status == "proposed" and record.accepted_questions == []


def test_curators_accept_many_proposals_at_once_and_a_failed_ask_is_left_alone(
    make_package, django_capture_on_commit_callbacks, model, client, curator
):
    with django_capture_on_commit_callbacks(execute=True):
        first = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    model.reply = "I cannot help with that."
    with django_capture_on_commit_callbacks(execute=True):
        second = make_package("OVERTIME", title="Hora extra", summary="Aprovação.", body="Precisa de aprovação.")
    proposed = RevisionSearchTerms.objects.get(revision__package=first)
    failed = RevisionSearchTerms.objects.get(revision__package=second)
    assert (proposed.status, failed.status) == ("proposed", "failed")
    version = catalog_version_get()

    client.force_login(curator)
    response = client.post(
        "/admin/knowledge/revisionsearchterms/",
        {"action": "accept_as_proposed", "_selected_action": [proposed.pk, failed.pk]},
        follow=True,
    )
    shown = [str(m) for m in response.context["messages"]]
    assert shown == [
        "Accepted as proposed: SICK_NOTES r1.",
        "Not waiting for a curator (accepted or failed), left as is: OVERTIME r1.",
    ]
    proposed.refresh_from_db()
    failed.refresh_from_db()
    assert proposed.status == "accepted" and proposed.reviewed_by == curator
    assert proposed.accepted == ["doctor's note", "certificado médico"] and proposed.accepted_questions == FLAT
    assert failed.status == "failed" and failed.accepted_questions == []
    assert catalog_version_get() == version + 1


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_the_sweep_re_embeds_a_revision_whose_questions_were_accepted_after_its_vector(
    make_package, django_capture_on_commit_callbacks, model, settings, monkeypatch
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge import tasks
    from knowledge.embeddings import embedding_sweep

    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    revision = package.revisions.get()
    record = RevisionSearchTerms.objects.get(revision=revision)
    passage = RevisionEmbedding.objects.get(revision=revision)
    assert embedding_sweep() == {"embedded": 0, "missing": 0, "unavailable": 0}

    # The accept's re-embedding task never reaches a worker (broker down): the passage vector stays.
    monkeypatch.setattr(tasks.embed_revision, "delay", lambda *a, **k: None)
    with django_capture_on_commit_callbacks(execute=True):
        search_terms.search_terms_accept(record=record, terms=["doctor's note"], questions=FLAT)
    assert RevisionEmbedding.objects.get(revision=revision).text_digest == passage.text_digest

    assert embedding_sweep() == {"embedded": 1, "missing": 1, "unavailable": 0}
    stored = RevisionEmbedding.objects.get(revision=revision)
    assert stored.text_digest == text_digest(embedded_text(revision_text(revision), FLAT))
    # Then nothing is stale any more: one query, nothing embedded.
    with CaptureQueriesContext(connection) as captured:
        assert embedding_sweep() == {"embedded": 0, "missing": 0, "unavailable": 0}
    assert len(captured.captured_queries) == 1
