"""Curation-time expansion: the model proposes en/es search terms on save; a curator accepts them; they are indexed."""

import json

import pytest

from knowledge import search_terms
from knowledge.models import RevisionSearchTerms
from knowledge.routing_service import route_context
from knowledge.selectors import catalog_version_get
from llm.base import LLMResult, ProviderUnavailable

BODY = "Os atestados médicos são entregues pelo portal em até 48 horas após a falta."
QUESTION = "Where do I upload the sick leave paperwork?"


class StubModel:
    name = "stub"

    def __init__(self, reply):
        self.reply = reply
        self.requests = []

    def complete(self, request):
        self.requests.append(request)
        if isinstance(self.reply, Exception):
            raise self.reply
        return LLMResult(text=self.reply)


def configured_model(monkeypatch, reply) -> StubModel:
    """A real provider configured (the offline provider never asks), answering ``reply``."""
    stub = StubModel(reply)
    monkeypatch.setattr(search_terms, "_provider", lambda: stub)
    monkeypatch.setattr(search_terms, "_offline", lambda: False)
    return stub


@pytest.fixture
def model(monkeypatch):
    return configured_model(
        monkeypatch,
        "```json\n"
        + json.dumps({"en": ["doctor's note", "sick leave paperwork"], "es": ["certificado médico", "baja"]})
        + "\n```",
    )


@pytest.fixture(autouse=True)
def _on(settings):
    settings.KNOWLEDGE_SEARCH_TERMS_ON_SAVE = True


def _save(make_package, capture):
    with capture(execute=True):
        return make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)


def test_with_the_offline_provider_nothing_is_asked_and_nothing_breaks(
    make_package, django_capture_on_commit_callbacks
):
    package = _save(make_package, django_capture_on_commit_callbacks)
    assert package.revision_number == 1
    assert not RevisionSearchTerms.objects.exists()
    assert search_terms.search_terms_propose(revision_pk=package.revisions.get().pk) is None
    assert route_context(message="Qual o prazo do atestado?").full_ids == ["SICK_NOTES"]


def test_a_saved_revision_gets_a_proposal_a_curator_accepts_and_the_router_indexes(
    make_package, django_capture_on_commit_callbacks, model, client, curator
):
    assert "SICK_NOTES" not in route_context(message=QUESTION).full_ids
    package = _save(make_package, django_capture_on_commit_callbacks)
    record = RevisionSearchTerms.objects.get(revision__package=package)
    assert record.status == "proposed"
    assert record.proposed == {"en": ["doctor's note", "sick leave paperwork"], "es": ["certificado médico", "baja"]}
    assert BODY in model.requests[0].messages[1].content
    # Proposed only: not indexed yet.
    assert "SICK_NOTES" not in route_context(message=QUESTION).full_ids

    version = catalog_version_get()
    client.force_login(curator)
    page = client.get(f"/admin/knowledge/revisionsearchterms/{record.pk}/change/")
    assert "doctor&#x27;s note, sick leave paperwork, certificado médico, baja" in page.content.decode()
    response = client.post(
        f"/admin/knowledge/revisionsearchterms/{record.pk}/change/",
        {"accepted": "doctor's note, sick leave paperwork, certificado médico"},
    )
    assert response.status_code == 302
    record.refresh_from_db()
    assert record.status == "accepted"
    assert record.accepted == ["doctor's note", "sick leave paperwork", "certificado médico"]
    assert record.reviewed_by == curator and catalog_version_get() == version + 1
    result = route_context(message=QUESTION)
    assert result.ranked()[0].id == "SICK_NOTES" and "SICK_NOTES" in result.full_ids


def test_a_redelivered_task_does_not_ask_twice_and_a_failure_is_recorded(
    make_package, django_capture_on_commit_callbacks, model
):
    package = _save(make_package, django_capture_on_commit_callbacks)
    revision_pk = package.revisions.get().pk
    search_terms.search_terms_propose(revision_pk=revision_pk)
    assert len(model.requests) == 1
    RevisionSearchTerms.objects.all().delete()
    model.reply = ProviderUnavailable("timeout")
    assert search_terms.search_terms_propose(revision_pk=revision_pk).status == "failed"
    model.reply = "I cannot help with that."
    assert search_terms.search_terms_propose(revision_pk=revision_pk).status == "failed"
    model.reply = json.dumps({"en": ["sick note"], "es": []})
    assert search_terms.search_terms_propose(revision_pk=revision_pk).status == "proposed"


def test_the_setting_turns_it_off_for_any_provider(make_package, django_capture_on_commit_callbacks, model, settings):
    settings.KNOWLEDGE_SEARCH_TERMS_ON_SAVE = False
    _save(make_package, django_capture_on_commit_callbacks)
    assert model.requests == [] and not RevisionSearchTerms.objects.exists()


def test_a_deactivation_asks_nothing(make_package, django_capture_on_commit_callbacks, model):
    from knowledge.services import package_set_active

    package = _save(make_package, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        package_set_active(acting_user=None, package=package, active=False)
    assert len(model.requests) == 1
