"""Grounding of agent answers: every number must be in what the turn delivered.

Through the API with the LLM scripted over a real socket, for each
`number_policy`: flag (deliver, flagged), retry (one corrective call; it
succeeds, or it fails and hands off) and handoff.
"""

import logging

import pytest
from prometheus_client import REGISTRY

from conversations.models import Handoff, Message
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db

GROUNDED = "O orçamento formal vale por 30 dias corridos."  # PRICING_RULES says "30 dias corridos"
UNGROUNDED = "O orçamento formal vale por 45 dias e custa R$ 250,00."


@pytest.fixture
def scripted_llm(scripted_llm, settings):
    # These tests count calls and read the outcome: on a loaded machine the default
    # 0.5 s would turn a slow scripted answer into a provider hand-off.
    settings.LLM_TIMEOUT = 5
    return scripted_llm


def fetch(package_id):
    return {"s": 99, "context_needed": package_id}


def answer(text):
    return {"s": 0, "message": text}


def counted(outcome):
    return REGISTRY.get_sample_value("contexto_turn_grounding_total", {"outcome": outcome}) or 0


def policy(session, value):
    session.agent.number_policy = value
    session.agent.save(update_fields=["number_policy"])


def test_numbers_from_the_delivered_package_and_the_user_message_are_verified(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer(GROUNDED + " Seu pedido 4821 segue."))
    before = counted("verified")
    body = send(api_client, chat_session, "Quanto tempo vale o orçamento do pedido 4821?").json()
    assert body["status"] == "answered"
    assert body["grounding"] == {"outcome": "verified", "unmatched": []}
    assert Message.objects.get(pk=body["message_id"]).grounding == body["grounding"]
    assert counted("verified") == before + 1
    listed = api_client.get(f"/api/v1/sessions/{chat_session.pk}/messages").json()["results"]
    assert listed[-1]["grounding"] == body["grounding"] and listed[0]["grounding"] is None  # the user's own message


def test_flag_delivers_the_answer_marked_unverified(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer(UNGROUNDED))
    before = counted("unverified")
    body = send(api_client, chat_session, "Quanto tempo vale o orçamento?").json()
    assert body["status"] == "answered" and body["reply"] == UNGROUNDED
    assert body["grounding"] == {
        "outcome": "unverified",
        "unmatched": [
            {"text": "45 dias", "reason": "not_in_context"},
            {"text": "R$ 250,00", "reason": "not_in_context"},
        ],
    }
    stored = Message.objects.get(pk=body["message_id"])
    assert stored.grounding == body["grounding"] and stored.response["grounding"] == body["grounding"]
    assert len(scripted_llm.requests) == 2  # no extra call
    assert counted("unverified") == before + 1


def test_retry_names_the_numbers_and_delivers_a_grounded_second_answer(api_client, chat_session, scripted_llm):
    policy(chat_session, "retry")
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer(UNGROUNDED)).reply_json(answer(GROUNDED))
    body = send(api_client, chat_session, "Quanto tempo vale o orçamento?").json()
    assert body["status"] == "answered" and body["reply"] == GROUNDED
    assert body["grounding"] == {"outcome": "verified", "unmatched": []}
    assert len(scripted_llm.requests) == 3
    corrective = scripted_llm.requests[2].messages
    assert corrective[-2]["role"] == "assistant" and "45 dias" in corrective[-2]["content"]
    assert corrective[-1]["role"] == "user"
    assert '"45 dias"' in corrective[-1]["content"] and '"R$ 250,00"' in corrective[-1]["content"]
    assert Message.objects.get(pk=body["message_id"]).llm_calls == 3


def test_retry_that_fails_again_hands_off_for_an_ungrounded_number(api_client, chat_session, scripted_llm):
    policy(chat_session, "retry")
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer(UNGROUNDED))
    scripted_llm.reply_json(answer("Vale por 60 dias."))
    body = send(api_client, chat_session, "Quanto tempo vale o orçamento?").json()
    assert body["status"] == "handoff"
    assert body["handoff"]["reason"] == "ungrounded_number"
    assert "60" not in body["handoff"]["detail"]
    assert body["grounding"] == {
        "outcome": "unverified",
        "unmatched": [{"text": "60 dias", "reason": "not_in_context"}],
    }
    assert len(scripted_llm.requests) == 3  # one corrective call only
    assert Handoff.objects.get(message_id=body["message_id"]).reason == "ungrounded_number"


def test_retry_stays_within_the_call_cap(api_client, chat_session, scripted_llm, settings):
    policy(chat_session, "retry")
    settings.MAX_AGENT_CALLS_PER_TURN = 2
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer(UNGROUNDED))
    body = send(api_client, chat_session, "Quanto tempo vale o orçamento?").json()
    assert body["handoff"]["reason"] == "ungrounded_number"
    assert len(scripted_llm.requests) == 2


def test_handoff_policy_hands_off_at_once(api_client, chat_session, scripted_llm):
    policy(chat_session, "handoff")
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer(UNGROUNDED))
    body = send(api_client, chat_session, "Quanto tempo vale o orçamento?").json()
    assert body["status"] == "handoff" and body["handoff"]["reason"] == "ungrounded_number"
    assert UNGROUNDED not in body["reply"]
    assert len(scripted_llm.requests) == 2


def test_a_turn_without_an_agent_answer_is_skipped(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 90, "reason": "quero um humano"})
    before = counted("skipped")
    body = send(api_client, chat_session, "Falar com alguém").json()
    assert body["grounding"] == {"outcome": "skipped", "unmatched": []}
    assert counted("skipped") == before + 1
    assert 'contexto_turn_grounding_total{outcome="skipped"}' in api_client.get("/metrics").content.decode()


def test_neither_the_numbers_nor_the_text_are_logged(api_client, chat_session, scripted_llm, caplog):
    policy(chat_session, "retry")
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer(UNGROUNDED))
    scripted_llm.reply_json(answer("Vale por 60 dias."))
    with caplog.at_level(logging.DEBUG):
        send(api_client, chat_session, "Quanto tempo vale o orçamento 777?")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "grounding=unverified unmatched=1" in logged
    for secret in ("45", "250", "60 dias", "777", "orçamento formal", "Quanto tempo"):
        assert secret not in logged, secret


def test_number_policy_is_an_admin_setting(admin_client, agents):
    agent = agents["atendimento"]
    page = admin_client.get(f"/admin/conversations/agent/{agent.pk}/change/").content.decode()
    assert 'name="number_policy"' in page and 'value="retry"' in page and 'value="handoff"' in page
