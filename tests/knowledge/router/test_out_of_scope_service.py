"""Out-of-scope question sets kept by curators in the admin (knowledge.models.OutOfScopeSet): saved,
validated, read into the catalog and applied by the router (docs/retrieval.md, "Out-of-scope questions")."""

import io
import json

import pytest
from django.core.management import call_command

from common.text import retrieval_embeddings
from knowledge.catalog import get_active_catalog
from knowledge.models import OutOfScopeSet
from knowledge.routing_service import route_context
from knowledge.selectors import catalog_version_get
from knowledge.services import out_of_scope_set_save
from llm.base import LLMResult, ProviderUnavailable

ADD = "/admin/knowledge/outofscopeset/add/"
PROPOSE = "/admin/knowledge/outofscopeset/propose/"


def _output(command, *args) -> str:
    out = io.StringIO()
    command(*args, stdout=out)
    return out.getvalue()


def test_a_set_saved_in_the_admin_is_cleaned_and_read_into_the_catalog(catalog, client, curator):
    version = catalog_version_get()
    client.force_login(curator)
    response = client.post(
        ADD,
        {
            "name": "other labs",
            "questions": "  Vocês fazem teste de covid?\n\nvocês fazem teste de covid?\nTêm estágio?",
            "is_active": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:500]
    assert OutOfScopeSet.objects.get(name="other labs").questions == ["Vocês fazem teste de covid?", "Têm estágio?"]
    assert catalog_version_get() == version + 1
    assert get_active_catalog().out_of_scope == ("Vocês fazem teste de covid?", "Têm estágio?")
    # Deactivated: gone from the catalog.
    out_of_scope_set = OutOfScopeSet.objects.get(name="other labs")
    response = client.post(
        f"/admin/knowledge/outofscopeset/{out_of_scope_set.pk}/change/",
        {"name": "other labs", "questions": "Vocês fazem teste de covid?"},
    )
    assert response.status_code == 302
    assert get_active_catalog().out_of_scope == ()


@pytest.mark.parametrize(
    "questions,error",
    [
        ("  \n ", "This field is required"),
        ("x" * 201, "at most 200 characters"),
        ("\n".join(f"pergunta {i}?" for i in range(151)), "at most 150 questions"),
    ],
)
def test_a_set_is_refused_with_a_clear_error_and_nothing_saved(catalog, client, curator, questions, error):
    version = catalog_version_get()
    client.force_login(curator)
    response = client.post(ADD, {"name": "bad", "questions": questions, "is_active": "on"})
    assert response.status_code == 200
    assert error in response.content.decode()
    assert not OutOfScopeSet.objects.exists() and catalog_version_get() == version


def test_the_active_sets_hold_at_most_600_questions_in_all(catalog, client, curator):
    for n in range(4):
        out_of_scope_set_save(
            out_of_scope_set=OutOfScopeSet(name=f"set {n}", questions=[f"pergunta {n}-{i}?" for i in range(150)])
        )
    client.force_login(curator)
    response = client.post(ADD, {"name": "one more", "questions": "Mais uma?", "is_active": "on"})
    assert response.status_code == 200 and "more than 600 questions in all" in response.content.decode()
    # Inactive, it may be kept.
    response = client.post(ADD, {"name": "one more", "questions": "Mais uma?"})
    assert response.status_code == 302
    assert len(get_active_catalog().out_of_scope) == 600


def test_staff_who_are_not_curators_cannot_add_a_set(catalog, client, staff_reader):
    client.force_login(staff_reader)
    assert (
        client.post(ADD, {"name": "x", "questions": "Vocês fazem teste de covid?", "is_active": "on"}).status_code
        == 403
    )
    assert not OutOfScopeSet.objects.exists()


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the sentence-embedding models are not installed")
def test_a_message_like_an_out_of_scope_question_gets_no_full_body(catalog):
    # The genomics lab does not test for covid; without the set, its consumer-genetics article arrives in full.
    question = "Vocês fazem teste de covid?"
    call_command("embed_packages")
    assert "GOGENETIC_YOU" in route_context(message=question).full_ids
    out_of_scope_set_save(
        out_of_scope_set=OutOfScopeSet(name="clinical tests", questions=["Vocês fazem exame de covid ou de gripe?"])
    )
    assert "Out-of-scope questions: 1 vector ready." in _output(call_command, "embed_packages")
    result = route_context(message=question)
    assert result.full_ids == [] and "GOGENETIC_YOU" in result.listed_ids
    assert any(n["signal"] == "out_of_scope" for d in result.listed for n in d.why)


# ------------------------------------------------------------------ the model proposes a set


class _StubModel:
    name = "stub"

    def __init__(self, reply):
        self.reply, self.requests = reply, []

    def complete(self, request):
        self.requests.append(request)
        if isinstance(self.reply, Exception):
            raise self.reply
        return LLMResult(text=self.reply)


def _configured(monkeypatch, reply) -> _StubModel:
    from knowledge import out_of_scope

    stub = _StubModel(reply)
    monkeypatch.setattr(out_of_scope, "_provider", lambda: stub)
    monkeypatch.setattr(out_of_scope, "model_configured", lambda: True)
    return stub


PROPOSAL = json.dumps(
    {
        "pt": ["Vocês fazem teste de covid?", "  Vocês fazem teste de covid? ", "x" * 201, 7],
        "en": ["Do you test for covid?"],
        "es": ["¿Hacen prueba de covid?"],
    }
)


def test_a_curator_asks_the_model_and_gets_an_inactive_set_to_review(
    catalog, client, curator, monkeypatch, django_capture_on_commit_callbacks
):
    stub = _configured(monkeypatch, "```json\n" + PROPOSAL + "\n```")
    version = catalog_version_get()
    client.force_login(curator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(PROPOSE, follow=True)
    assert response.status_code == 200 and "The model was asked" in response.content.decode()
    proposed = OutOfScopeSet.objects.get()
    assert proposed.name.startswith("Proposed by the model (") and not proposed.is_active
    # Cleaned: duplicates, a question past 200 characters and a non-string dropped.
    assert proposed.questions == ["Vocês fazem teste de covid?", "Do you test for covid?", "¿Hacen prueba de covid?"]
    # The model read the catalog's titles and summaries; routing is unchanged until a curator activates it.
    assert "TARGETS_QPCR" in stub.requests[0].messages[1].content
    assert get_active_catalog().out_of_scope == ()
    assert catalog_version_get() == version + 1
    # The same request redelivered asks nothing more.
    from knowledge.out_of_scope import out_of_scope_propose

    key = proposed.name.split("(")[1].rstrip(")")
    assert out_of_scope_propose(request_key=key) == proposed and len(stub.requests) == 1


def test_without_a_model_nothing_is_asked_and_the_curator_is_told(catalog, client, curator):
    client.force_login(curator)
    response = client.post(PROPOSE, follow=True)
    assert response.status_code == 200 and "No language model is configured" in response.content.decode()
    assert not OutOfScopeSet.objects.exists()
    assert client.get(PROPOSE).status_code == 405


@pytest.mark.parametrize("reply", ["Sorry, I cannot.", '{"pt": []}', ProviderUnavailable("timeout")])
def test_an_answer_without_questions_stores_nothing(catalog, monkeypatch, reply):
    from knowledge.out_of_scope import out_of_scope_propose

    _configured(monkeypatch, reply)
    assert out_of_scope_propose(request_key="k1") is None and not OutOfScopeSet.objects.exists()


def test_staff_who_are_not_curators_cannot_ask_the_model(catalog, client, staff_reader, monkeypatch):
    stub = _configured(monkeypatch, PROPOSAL)
    client.force_login(staff_reader)
    assert client.post(PROPOSE).status_code == 403 and not stub.requests


def test_with_the_queue_unreachable_the_curator_is_told_and_nothing_is_asked(catalog, client, curator, monkeypatch):
    from knowledge import tasks

    stub = _configured(monkeypatch, PROPOSAL)

    def down(*args, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr(tasks.propose_out_of_scope, "delay", down)
    client.force_login(curator)
    response = client.post(PROPOSE, follow=True)
    assert response.status_code == 200 and "The task queue cannot be reached" in response.content.decode()
    assert not stub.requests and not OutOfScopeSet.objects.exists()
