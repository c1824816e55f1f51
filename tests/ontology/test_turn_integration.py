"""The agent turn for agents configured with an ontology (LLM scripted over a real socket)."""

import pytest

from conversations.agents_seed import agents_seed_ensure
from conversations.models import Agent, Handoff, Session
from ontology.models import OntologyRoute
from tests.conversations.helpers import send

from .conftest import SEED_MESSAGE, SEED_SKILLS

pytestmark = pytest.mark.django_db


@pytest.fixture
def scripted_llm(settings, llm_server):
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.url
    settings.LLM_MODEL = "scripted-model"
    settings.LLM_TIMEOUT = 0.5
    settings.LLM_MAX_RETRIES = 0
    settings.AGENT_KNOWLEDGE_ROUTER = False
    return llm_server


@pytest.fixture
def agent(db):
    agents_seed_ensure()
    agent = Agent.objects.filter(is_default=True).first() or Agent.objects.first()
    agent.ontology = True
    agent.save(update_fields=["ontology"])
    return agent


@pytest.fixture
def session(user, tenant, agent, catalog) -> Session:
    return Session.objects.create(tenant=tenant, user=user, agent=agent)


@pytest.fixture
def profile(api_client):
    assert api_client.put("/api/v1/profile", {"skills": list(SEED_SKILLS)}, format="json").status_code == 200


def test_an_ontology_agent_gets_the_structured_context_and_the_turn_returns_the_route(
    api_client, session, profile, sample_chunks, scripted_llm
):
    scripted_llm.reply_json({"s": 0, "message": "Vamos olhar a inoculação primeiro."})
    response = send(api_client, session, SEED_MESSAGE)
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["status"] == "answered"
    ontology = data["ontology"]
    assert ontology["pattern"] == "diagnosis" and ontology["strategy"] == "multi_hop_guiado"
    assert ontology["distribution"] == {
        "multi_hop_guiado": 0.6,
        "casos_semelhantes": 0.25,
        "hibrida": 0.1,
        "raptor": 0.05,
    }
    (request,) = scripted_llm.requests  # one final LLM call
    assert "## Ontology reasoning for this message" in request.system_prompt
    assert "[sin_baixa_nodulacao]" in request.system_prompt and "## 7. Indicadores" in request.system_prompt
    assert OntologyRoute.objects.get(pk=ontology["route_id"]).origin == "turn"


def test_an_agent_without_ontology_is_unchanged(api_client, session, profile, sample_chunks, scripted_llm):
    Agent.objects.filter(pk=session.agent_id).update(ontology=False)
    scripted_llm.reply_json({"s": 0, "message": "ok"})
    data = send(api_client, session, SEED_MESSAGE).json()
    assert "ontology" not in data
    assert "Ontology reasoning" not in scripted_llm.requests[0].system_prompt
    assert not OntologyRoute.objects.exists()


def test_an_unclear_symptom_asks_back_without_calling_the_llm(
    api_client, session, profile, sample_chunks, scripted_llm
):
    data = send(api_client, session, "minhas plantas estão estranhas").json()
    assert data["status"] == "clarification"
    assert data["reply"].startswith("Pode descrever")
    assert data["ontology"]["interruptions"][0]["type"] == "clarifying_question"
    assert scripted_llm.requests == []


def test_a_critical_skill_hands_off_to_the_guardian(api_client, session, profile, sample_chunks, scripted_llm):
    data = send(api_client, session, "a lavoura tem erosão em sulcos depois da chuva").json()
    assert data["status"] == "handoff"
    assert data["handoff"]["reason"] == "guardian"
    assert Handoff.objects.get(session=session).reason == "guardian"
    assert scripted_llm.requests == []


def test_irreversible_risk_answers_carry_the_caveat(api_client, session, profile, sample_chunks, scripted_llm):
    scripted_llm.reply_json({"s": 0, "message": "Depende da análise de solo."})
    data = send(api_client, session, "quanto calcário devo aplicar?").json()
    assert data["status"] == "answered"
    assert data["reply"].startswith("Depende da análise de solo.")
    assert "Posso encaminhar sua pergunta a um especialista." in data["reply"]


def test_every_ontology_turn_records_its_route_on_the_reply_and_as_a_route_row(
    api_client, session, profile, sample_chunks, scripted_llm
):
    from conversations.models import Message

    scripted_llm.reply_json({"s": 0, "message": "Vamos olhar a inoculação primeiro."})
    data = send(api_client, session, SEED_MESSAGE).json()
    send(api_client, session, "minhas plantas estão estranhas")  # an interrupted turn records its route too
    rows = list(OntologyRoute.objects.filter(origin="turn").order_by("id"))
    assert [r.pattern for r in rows] == ["diagnosis", "diagnosis"]
    first = rows[0]
    assert first.tenant_id == session.tenant_id
    assert first.distribution == data["ontology"]["distribution"] and first.strategy == "multi_hop_guiado"
    assert first.filters == data["ontology"]["filters"]
    assert rows[1].interruptions == ["clarifying_question"]
    stored = [m.response["ontology"]["route_id"] for m in Message.objects.filter(session=session, role="assistant")]
    assert sorted(stored) == [r.pk for r in rows]


def test_a_long_message_to_an_ontology_agent_is_routed_on_its_opening(
    api_client, session, profile, sample_chunks, scripted_llm
):
    # the turn takes up to 8000 characters; the ontology route reads the first 4000
    scripted_llm.reply_json({"s": 0, "message": "Vamos olhar a inoculação primeiro."})
    message = SEED_MESSAGE + ". " + "Detalhes da lavoura e do manejo. " * 200
    assert 4000 < len(message) <= 8000
    response = send(api_client, session, message)
    assert response.status_code == 201, response.json()
    assert response.json()["ontology"]["pattern"] == "diagnosis"


def test_a_failing_ontology_route_hands_off_instead_of_a_500(api_client, session, scripted_llm, monkeypatch):
    # The ontology carries the guardian and risk rules; without it the agent must not answer alone.
    from conversations.services.turns import ontology_step

    def broken(**kwargs):
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(ontology_step, "ontology_route", broken)

    response = send(api_client, session, SEED_MESSAGE)

    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "handoff"
    assert body["handoff"]["reason"] == "uncertainty"
    assert scripted_llm.requests == []
    assert Handoff.objects.filter(session=session, reason="uncertainty").count() == 1
