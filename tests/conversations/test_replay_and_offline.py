"""The seed's TC-99 replay, the embedded offline provider end to end,
and per-agent provider overrides."""

from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

import llm
from llm.runtime import agent_llm_settings
from conversations.models import Agent
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db

TC_99 = Path(llm.__file__).parent / "fixtures" / "TC-99-context-enrichment.json"


def test_tc99_replay_enriches_then_answers(api_client, chat_session, settings):
    settings.LLM_PROVIDER = "replay"
    settings.LLM_REPLAY_FIXTURE = str(TC_99)

    data = send(api_client, chat_session, "Como devo acondicionar e enviar amostras de DNA para Sanger?").json()

    assert data["status"] == "answered"
    assert "gelo reciclável" in data["reply"]
    assert [p["id"] for p in data["packages"]] == ["SAMPLE_INSTRUCTIONS"]
    chat_session.refresh_from_db()
    assert chat_session.collected_packages == ["SAMPLE_INSTRUCTIONS"]
    assert chat_session.context_enrichment_count == 1


def test_offline_provider_fetches_and_quotes_the_catalog(api_client, chat_session, settings):
    assert settings.LLM_PROVIDER == "offline"  # the embedded default

    data = send(api_client, chat_session, "Qual a concentração mínima de plasmídeo para Sanger?").json()

    assert data["status"] == "answered", data
    assert data["packages"], "the offline agent asked for a package with s=99"
    package_id = data["packages"][0]["id"]
    assert f"({package_id})" in data["reply"]
    assert "Fonte:" in data["reply"]


def test_offline_provider_says_it_does_not_know(api_client, chat_session):
    data = send(api_client, chat_session, "Quem ganhou a copa de 1970?").json()
    assert data["status"] == "answered"
    assert data["reply"].startswith("Não encontrei essa informação")
    assert data["packages"] == []


def test_agent_override_routes_one_agent_to_its_own_endpoint(api_client, chat_session, llm_server, agents):
    agent = agents["atendimento"]
    agent.provider = "openai"
    agent.model = "agent-model"
    agent.settings = {"base_url": llm_server.url, "timeout": 2, "temperature": 0.1}
    agent.full_clean()
    agent.save()
    llm_server.reply("Resposta do endpoint do agente.")

    data = send(api_client, chat_session, "Oi").json()

    assert data["reply"] == "Resposta do endpoint do agente."
    sent = llm_server.requests[0].body
    assert sent["model"] == "agent-model"
    assert sent["temperature"] == 0.1
    assert llm_server.requests[0].system_prompt.startswith(agent.system_prompt.strip())


def test_agent_with_invalid_llm_settings_does_not_validate(agents):
    agent = agents["comercial"]
    agent.provider = "openai"  # no base URL anywhere
    with pytest.raises(ValidationError) as exc:
        agent.full_clean()
    assert "provider" in exc.value.message_dict
    agent.provider = ""
    agent.settings = {"colour": "blue"}
    with pytest.raises(ValidationError):
        agent.full_clean()


def test_three_seed_agents_exist_and_one_is_the_default(agents):
    assert set(agents) >= {"atendimento", "comercial", "suporte-tecnico"}
    assert list(Agent.objects.filter(is_default=True).values_list("slug", flat=True)) == ["atendimento"]
    assert agent_llm_settings(agents["comercial"]).provider == "offline"


def test_default_provider_follows_the_global_settings(settings, llm_server):
    from llm import ChatMessage, LLMRequest
    from llm.runtime import llm_settings, provider_for_settings

    assert provider_for_settings(llm_settings()).name == "offline"
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.url
    llm_server.reply("olá")
    assert (
        provider_for_settings(llm_settings()).complete(LLMRequest(messages=(ChatMessage("user", "oi"),))).text == "olá"
    )


@pytest.mark.parametrize(
    "options",
    [
        {"temperature": "0.2"},
        {"temperature": 3},
        {"top_p": 0},
        {"max_tokens": "500"},
        {"max_tokens": 0},
        {"seed": 1.5},
        {"seed": True},
    ],
)
def test_agent_request_options_of_the_wrong_type_do_not_validate(agents, options):
    agent = agents["comercial"]
    agent.settings = options
    with pytest.raises(ValidationError) as exc:
        agent.full_clean()
    assert list(exc.value.message_dict) == ["settings"]
    assert next(iter(options)) in exc.value.message_dict["settings"][0]


def test_agent_request_options_in_range_validate(agents):
    agent = agents["comercial"]
    agent.settings = {"temperature": 0, "top_p": 0.9, "max_tokens": 512, "seed": 7}
    agent.full_clean()


# --- the seed's cases as replay fixtures (LLM_PROVIDER=replay, through the API) -----------------

SEED_CASES = {
    "enrichment-then-answer": (
        [{"s": 99, "context_needed": "SAMPLE_INSTRUCTIONS"}, {"s": 0, "message": "ok"}],
        ("answered", None, ["SAMPLE_INSTRUCTIONS"], 1),
    ),
    "alias-PRECOS": (
        [{"s": 99, "context_needed": "PRECOS"}, {"s": 0, "message": "ok"}],
        ("answered", None, ["PRICING_RULES"], 1),
    ),
    "unknown-id": ([{"s": 99, "context_needed": "NAO_EXISTE"}], ("handoff", "uncertainty", [], 0)),
    "third-request-over-budget": (
        [{"s": 99, "context_needed": p} for p in ("PRICING_RULES", "GENOME_SIZES", "DELIVERY_TIMELINES")],
        ("handoff", "budget_exceeded", ["PRICING_RULES", "GENOME_SIZES", "DELIVERY_TIMELINES"], 3),
    ),
    "repeated-id-counted-not-duplicated": (
        [
            {"s": 99, "context_needed": "PRICING_RULES"},
            {"s": 99, "context_needed": "precos"},
            {"s": 0, "message": "ok"},
        ],
        ("answered", None, ["PRICING_RULES"], 2),
    ),
    "agent-asks-for-a-person": ([{"s": 90, "reason": "negociação"}], ("handoff", "agent_request", [], 0)),
    "unparseable": (['{"s": 0, "message": '], ("handoff", "invalid_reply", [], 0)),
    "provider-outage": ([{"provider_unavailable": "timeout"}], ("handoff", "provider_unavailable", [], 0)),
}


@pytest.mark.parametrize("case", list(SEED_CASES))
def test_seed_case_replayed_from_a_fixture(api_client, chat_session, settings, tmp_path, case):
    import json

    replies, (status, reason, collected, count) = SEED_CASES[case]
    fixture = tmp_path / f"{case}.json"
    fixture.write_text(json.dumps({"name": case, "turns": [{"user": "?", "replies": replies}]}))
    settings.LLM_PROVIDER = "replay"
    settings.LLM_REPLAY_FIXTURE = str(fixture)

    response = send(api_client, chat_session, "Pergunta do caso")

    assert response.status_code == 201
    data = response.json()
    assert (data["status"], (data["handoff"] or {}).get("reason")) == (status, reason)
    chat_session.refresh_from_db()
    assert (chat_session.collected_packages, chat_session.context_enrichment_count) == (collected, count)
    assert chat_session.messages.count() == 2  # the turn is saved whatever happened
