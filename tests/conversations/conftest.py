"""Fixtures for agent turns: seeded agents, a session, the scripted LLM as provider."""

import pytest

from conversations.agents_seed import agents_seed_ensure
from conversations.models import Agent, Session


@pytest.fixture(autouse=True)
def catalog_only(settings):
    """The s=99 protocol tests run with the catalog alone: every body comes from a fetch.

    Tests of the router's knowledge set turn it back on.
    """
    settings.AGENT_KNOWLEDGE_ROUTER = False


@pytest.fixture
def agents(db):
    # Seeded by a data migration; transactional tests flush them, so ensure again.
    agents_seed_ensure()
    return {a.slug: a for a in Agent.objects.all()}


@pytest.fixture
def scripted_llm(settings, llm_server):
    """Route every agent to the scripted OpenAI-compatible server over a real socket."""
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.url
    settings.LLM_MODEL = "scripted-model"
    # Generous: a loaded CI machine must not turn a slow answer into a hand-off. Tests of the
    # timeout itself set their own short timeout.
    settings.LLM_TIMEOUT = 5
    settings.LLM_MAX_RETRIES = 0
    return llm_server


@pytest.fixture
def chat_session(user, tenant, agents, catalog) -> Session:
    return Session.objects.create(tenant=tenant, user=user, agent=agents["atendimento"])
