"""One turn never embeds one text twice (the sentence-embedding engine's calls are counted)."""

import pytest
from django.core.cache import cache
from django.core.management import call_command

from common.text import embeddings
from conversations.agents_seed import agents_seed_ensure
from conversations.models import Agent, Session
from tests.conversations.helpers import send

from .conftest import SEED_MESSAGE, SEED_SKILLS

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not embeddings.available(), reason="the bundled embedding model is required"),
]


class _CountingEngine:
    def __init__(self, engine):
        self.engine = engine
        self.calls: list[tuple[str, str]] = []

    def query(self, texts):
        self.calls += [("query", t) for t in texts]
        return self.engine.query(texts)

    def passage(self, texts):
        self.calls += [("passage", t) for t in texts]
        return self.engine.passage(texts)


@pytest.fixture
def engine(monkeypatch):
    counting = _CountingEngine(embeddings._model())
    monkeypatch.setitem(embeddings._state, "model", counting)
    embeddings.clear_cache()
    yield counting
    embeddings.clear_cache()


@pytest.fixture
def scripted_llm(settings, llm_server):
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.url
    settings.LLM_MODEL = "scripted-model"
    settings.LLM_TIMEOUT = 0.5
    settings.LLM_MAX_RETRIES = 0
    settings.AGENT_KNOWLEDGE_ROUTER = True
    settings.KNOWLEDGE_DENSE_GATE = "always"
    return llm_server


@pytest.fixture
def session(user, tenant, catalog, api_client):
    agents_seed_ensure()
    agent = Agent.objects.filter(is_default=True).first() or Agent.objects.first()
    agent.ontology = True
    agent.save(update_fields=["ontology"])
    call_command("embed_packages")
    cache.clear()  # no route answered from an earlier run's cache: the router must embed
    assert api_client.put("/api/v1/profile", {"skills": list(SEED_SKILLS)}, format="json").status_code == 200
    return Session.objects.create(tenant=tenant, user=user, agent=agent)


def test_a_one_part_turn_embeds_its_question_once(api_client, session, sample_chunks, scripted_llm, engine):
    # The ontology's classifier embeds the message, the router (dense gate open) its one part: the
    # same text, so the second is a cache hit.
    scripted_llm.reply_json({"s": 0, "message": "Vamos olhar a inoculação primeiro."})
    engine.calls.clear()
    response = send(api_client, session, SEED_MESSAGE)
    assert response.status_code == 201, response.json()
    assert response.json()["ontology"]["pattern"] == "diagnosis"
    assert engine.calls == [("query", SEED_MESSAGE)]


@pytest.mark.parametrize(
    "message",
    [f"{SEED_MESSAGE}?", "Qual o prazo do sequenciamento Sanger? E como envio a amostra de solo?"],
)
def test_a_turn_never_embeds_one_text_twice(api_client, session, sample_chunks, scripted_llm, engine, message):
    # The classifier reads the whole message, the router each part as its splitter cut it (no final
    # "?"): different texts, each embedded once (see docs/retrieval.md, "Dense signal", for why they
    # are not made one text).
    scripted_llm.reply_json({"s": 0, "message": "Vamos ver."})
    engine.calls.clear()
    assert send(api_client, session, message).status_code == 201
    assert engine.calls and len(engine.calls) == len(set(engine.calls)), engine.calls
