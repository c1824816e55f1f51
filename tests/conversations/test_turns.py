"""The seed's s=99 protocol, turn by turn, with the LLM scripted over a real socket.

Each test scripts the model's replies on the local OpenAI-compatible server,
sends one user message through the API and checks the reply, the hand-off,
the session state and what the model was shown.
"""

import pytest

from conversations.models import Handoff, Message, Session
from conversations.services import handoff_resolve
from knowledge.catalog import get_active_catalog
from knowledge.models import Package
from knowledge.services import package_set_active, package_update
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db


def fetch(package_id):
    return {"s": 99, "context_needed": package_id}


def answer(text="Pronto."):
    return {"s": 0, "message": text}


def body_marker(package_id: str) -> str:
    """A line that only appears in the prompt when the package's body was delivered."""
    return get_active_catalog().get(package_id).body.strip().splitlines()[-1]


# --- enrichment --------------------------------------------------------------------------------


def test_fetch_then_answer_delivers_the_package_and_answers(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("SAMPLE_INSTRUCTIONS")).reply_json(answer("Envie refrigerado."))
    marker = body_marker("SAMPLE_INSTRUCTIONS")

    response = send(api_client, chat_session, "Como envio amostras para Sanger?")

    assert response.status_code == 201, response.json()
    data = response.json()
    revision = get_active_catalog().get("SAMPLE_INSTRUCTIONS").revision
    assert data["status"] == "answered"
    assert data["reply"] == "Envie refrigerado."
    assert data["handoff"] is None
    assert data["packages"] == [{"id": "SAMPLE_INSTRUCTIONS", "revision": revision}]
    assert data["catalog_version"] == get_active_catalog().version
    assert set(data["timings_ms"]) >= {"total", "llm"}
    first, second = scripted_llm.requests
    assert marker not in first.system_prompt
    assert marker in second.system_prompt
    assert "SAMPLE_INSTRUCTIONS" in first.system_prompt  # the catalog is always there
    chat_session.refresh_from_db()
    assert chat_session.collected_packages == ["SAMPLE_INSTRUCTIONS"]
    assert chat_session.context_enrichment_count == 1
    reply = Message.objects.get(pk=data["message_id"])
    assert (reply.llm_calls, reply.context_enrichments, reply.status) == (2, 1, "answered")


def test_alias_request_loads_the_canonical_package(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("PRECOS")).reply_json(answer())

    data = send(api_client, chat_session, "Quanto custa?").json()

    assert data["status"] == "answered"
    assert [p["id"] for p in data["packages"]] == ["PRICING_RULES"]
    assert body_marker("PRICING_RULES") in scripted_llm.requests[1].system_prompt
    chat_session.refresh_from_db()
    assert chat_session.collected_packages == ["PRICING_RULES"]


def test_alias_resolution_ignores_case_accents_and_separators(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("  preços ")).reply_json(answer())
    assert [p["id"] for p in send(api_client, chat_session, "Preço?").json()["packages"]] == ["PRICING_RULES"]


def test_procedure_is_loaded_with_the_procedure_prefix(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("::CLICKSIGN_PROCESS")).reply_json(answer())

    data = send(api_client, chat_session, "Como assino o orçamento?").json()

    assert data["status"] == "answered"
    assert [p["id"] for p in data["packages"]] == ["CLICKSIGN_PROCESS"]
    assert "### ::CLICKSIGN_PROCESS" in scripted_llm.requests[1].system_prompt


def test_collected_packages_reach_later_turns(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("GENOME_SIZES")).reply_json(answer("Primeira."))
    scripted_llm.reply_json(answer("Segunda."))

    send(api_client, chat_session, "Qual o limite de genoma?")
    data = send(api_client, chat_session, "E para bactérias?").json()

    third = scripted_llm.requests[2]
    assert body_marker("GENOME_SIZES") in third.system_prompt
    assert [p["id"] for p in data["packages"]] == ["GENOME_SIZES"]
    # the conversation so far is part of the request
    assert [m["role"] for m in third.messages] == ["system", "user", "assistant", "user"]
    assert third.messages[2]["content"] == "Primeira."


# --- uncertainty ----------------------------------------------------------------------------------


def test_unknown_id_hands_off_for_uncertainty(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("NOT_A_PACKAGE"))

    data = send(api_client, chat_session, "Pergunta").json()

    assert data["status"] == "handoff"
    assert data["handoff"]["reason"] == "uncertainty"
    assert "NOT_A_PACKAGE" in data["handoff"]["detail"]
    assert len(scripted_llm.requests) == 1  # the model is never asked to answer without it
    chat_session.refresh_from_db()
    assert chat_session.status == "handed_off"
    assert chat_session.collected_packages == []
    assert Handoff.objects.get(session=chat_session).reason == "uncertainty"


def test_inactive_package_hands_off_for_uncertainty(api_client, chat_session, scripted_llm, curator):
    package_set_active(acting_user=curator, package=Package.objects.get(package_id="PRICING_RULES"), active=False)
    scripted_llm.reply_json(fetch("PRICING_RULES"))

    data = send(api_client, chat_session, "Preço?").json()

    assert (data["status"], data["handoff"]["reason"]) == ("handoff", "uncertainty")


@pytest.mark.parametrize(
    "reply",
    [{"s": 99}, {"s": 99, "context_needed": ""}, {"s": 99, "context_needed": 7}, {"s": 99, "context_needed": None}],
    ids=["missing", "empty", "number", "null"],
)
def test_unusable_context_needed_hands_off_for_uncertainty(api_client, chat_session, scripted_llm, reply):
    scripted_llm.reply_json(reply)

    data = send(api_client, chat_session, "Pergunta").json()

    assert (data["status"], data["handoff"]["reason"]) == ("handoff", "uncertainty")
    assert len(scripted_llm.requests) == 1


# --- budget -----------------------------------------------------------------------------------


def test_third_fetch_in_one_message_hands_off_for_budget(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(fetch("DELIVERY_TIMELINES"))
    scripted_llm.reply_json(fetch("SAMPLE_INSTRUCTIONS"))

    data = send(api_client, chat_session, "Preço, prazo e envio?").json()

    assert data["status"] == "handoff"
    assert data["handoff"]["reason"] == "budget_exceeded"
    assert len(scripted_llm.requests) == 3
    assert scripted_llm.pending == 0
    chat_session.refresh_from_db()
    assert chat_session.context_enrichment_count == 3
    assert chat_session.status == "handed_off"
    reply = Message.objects.get(pk=data["message_id"])
    assert (reply.llm_calls, reply.context_enrichments) == (3, 3)


def test_enrichment_counter_resets_on_the_next_inbound(api_client, chat_session, scripted_llm, curator):
    # Two fetches in each of two messages: within budget both times.
    for _ in range(2):
        scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(fetch("DELIVERY_TIMELINES")).reply_json(answer())
    assert send(api_client, chat_session, "Primeira").json()["status"] == "answered"
    assert send(api_client, chat_session, "Segunda").json()["status"] == "answered"
    chat_session.refresh_from_db()
    assert chat_session.context_enrichment_count == 2

    # After a budget hand-off is resolved, the next message starts from zero again.
    for package_id in ("PRICING_RULES", "DELIVERY_TIMELINES", "GENOME_SIZES"):
        scripted_llm.reply_json(fetch(package_id))
    assert send(api_client, chat_session, "Terceira").json()["handoff"]["reason"] == "budget_exceeded"
    handoff_resolve(acting_user=curator, handoff=Handoff.objects.get(session=chat_session))
    scripted_llm.reply_json(fetch("GENOME_SIZES")).reply_json(answer())
    assert send(api_client, chat_session, "Quarta").json()["status"] == "answered"
    chat_session.refresh_from_db()
    assert chat_session.context_enrichment_count == 1


def test_repeated_id_is_not_duplicated_but_counted(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(fetch("PRECOS")).reply_json(answer())

    data = send(api_client, chat_session, "Preço?").json()

    assert data["status"] == "answered"
    chat_session.refresh_from_db()
    assert chat_session.collected_packages == ["PRICING_RULES"]
    assert chat_session.context_enrichment_count == 2
    assert scripted_llm.requests[2].system_prompt.count("### PRICING_RULES") == 1


def test_repeated_id_still_spends_the_budget(api_client, chat_session, scripted_llm):
    for _ in range(3):
        scripted_llm.reply_json(fetch("PRICING_RULES"))

    data = send(api_client, chat_session, "Preço?").json()

    assert data["handoff"]["reason"] == "budget_exceeded"
    chat_session.refresh_from_db()
    assert chat_session.collected_packages == ["PRICING_RULES"]


def test_budget_is_a_setting(api_client, chat_session, scripted_llm, settings):
    settings.MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE = 1
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(fetch("GENOME_SIZES"))

    assert send(api_client, chat_session, "x").json()["handoff"]["reason"] == "budget_exceeded"
    assert "at most 1 per user message" in scripted_llm.requests[0].system_prompt


def test_ten_provider_calls_in_one_turn_hand_off_at_the_iteration_cap(api_client, chat_session, scripted_llm, settings):
    settings.MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE = 50  # let the global cap be the one that stops the loop
    for _ in range(11):
        scripted_llm.reply_json(fetch("PRICING_RULES"))

    data = send(api_client, chat_session, "Preço?").json()

    assert data["status"] == "handoff"
    assert data["handoff"]["reason"] == "iteration_cap"
    assert len(scripted_llm.requests) == 10
    assert Message.objects.get(pk=data["message_id"]).llm_calls == 10


# --- other replies ------------------------------------------------------------------------------


def test_agent_request_hands_off_with_its_reason(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 90, "reason": "cliente quer negociar contrato"})

    data = send(api_client, chat_session, "Quero falar com alguém").json()

    assert data["status"] == "handoff"
    assert data["handoff"] == {"reason": "agent_request", "detail": "cliente quer negociar contrato"}
    assert "pessoa da nossa equipe" in data["reply"]


def test_plain_text_reply_is_an_answer(api_client, chat_session, scripted_llm):
    scripted_llm.reply("Olá! Como posso ajudar?")
    data = send(api_client, chat_session, "Oi").json()
    assert (data["status"], data["reply"]) == ("answered", "Olá! Como posso ajudar?")


def test_fenced_json_reply_is_understood(api_client, chat_session, scripted_llm):
    scripted_llm.reply('```json\n{"s": 0, "message": "Certo."}\n```')
    assert send(api_client, chat_session, "Oi").json()["reply"] == "Certo."


def test_unparseable_json_reply_hands_off_as_invalid_reply(api_client, chat_session, scripted_llm):
    scripted_llm.reply('{"s": 99, "context_needed": "PRICING_RULES"')

    data = send(api_client, chat_session, "Preço?").json()

    assert (data["status"], data["handoff"]["reason"]) == ("handoff", "invalid_reply")


# --- provider failures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script, reason",
    [
        (lambda server: server.delay(1.5), "timeout"),
        (lambda server: server.status(500), "http_500"),
        (lambda server: server.malformed(), "malformed_body"),
        (lambda server: server.empty_choices(), "empty_choices"),
    ],
    ids=["timeout", "500", "malformed", "empty-choices"],
)
def test_provider_failure_hands_off_and_saves_the_turn(api_client, chat_session, scripted_llm, script, reason, settings):
    settings.LLM_TIMEOUT = 0.5  # the scripted delay (1.5 s) must exceed it
    script(scripted_llm)

    response = send(api_client, chat_session, "Qual o prazo?")

    assert response.status_code == 201
    data = response.json()
    assert data["status"] == "handoff"
    assert data["handoff"]["reason"] == "provider_unavailable"
    assert reason in data["handoff"]["detail"]
    assert data["reply"].startswith("Desculpe")
    roles = list(chat_session.messages.values_list("role", "status"))
    assert roles == [("user", "processed"), ("assistant", "handoff")]
    chat_session.refresh_from_db()
    assert chat_session.status == "handed_off"


def test_provider_failure_after_a_fetch_keeps_what_was_collected(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json(fetch("PRICING_RULES")).status(503)

    data = send(api_client, chat_session, "Preço?").json()

    assert data["handoff"]["reason"] == "provider_unavailable"
    assert [p["id"] for p in data["packages"]] == ["PRICING_RULES"]
    chat_session.refresh_from_db()
    assert chat_session.collected_packages == ["PRICING_RULES"]


def test_provider_is_retried_per_settings(api_client, chat_session, scripted_llm, settings):
    settings.LLM_MAX_RETRIES = 1
    scripted_llm.status(502).reply_json(answer("Depois da falha."))
    assert send(api_client, chat_session, "Oi").json()["reply"] == "Depois da falha."


# --- freshness ----------------------------------------------------------------------------------


def test_admin_edit_between_turns_reaches_the_next_call(api_client, chat_session, scripted_llm, curator):
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer()).reply_json(answer())
    send(api_client, chat_session, "Preço?")
    package = Package.objects.get(package_id="PRICING_RULES")
    old_revision = package.revision_number
    package_update(acting_user=curator, package=package, data={**package.content(), "body": "Tabela nova: R$ 42."})

    data = send(api_client, chat_session, "E agora?").json()

    assert "Tabela nova: R$ 42." in scripted_llm.requests[2].system_prompt
    package.refresh_from_db()
    assert package.revision_number > old_revision
    assert data["packages"] == [{"id": "PRICING_RULES", "revision": package.revision_number}]


def test_deactivated_collected_package_is_no_longer_delivered(api_client, chat_session, scripted_llm, curator):
    scripted_llm.reply_json(fetch("PRICING_RULES")).reply_json(answer()).reply_json(answer())
    send(api_client, chat_session, "Preço?")
    package_set_active(acting_user=curator, package=Package.objects.get(package_id="PRICING_RULES"), active=False)

    data = send(api_client, chat_session, "E agora?").json()

    assert "### PRICING_RULES" not in scripted_llm.requests[2].system_prompt
    assert data["packages"] == []


# --- session state ----------------------------------------------------------------------------------


def test_message_to_a_handed_off_session_is_a_conflict(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 90, "reason": "x"})
    send(api_client, chat_session, "Oi")

    response = send(api_client, chat_session, "Ainda aí?")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "SESSION_NOT_OPEN"
    assert chat_session.messages.count() == 2  # the rejected message left no row


def test_message_to_a_closed_session_is_a_conflict(api_client, chat_session):
    Session.objects.filter(pk=chat_session.pk).update(status="closed")
    response = send(api_client, chat_session, "Oi")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "SESSION_NOT_OPEN"


def test_resolving_the_handoff_reopens_the_session(api_client, chat_session, scripted_llm, curator):
    scripted_llm.reply_json({"s": 90, "reason": "x"}).reply_json(answer("De volta."))
    send(api_client, chat_session, "Oi")
    handoff = Handoff.objects.get(session=chat_session)

    handoff_resolve(acting_user=curator, handoff=handoff)

    handoff.refresh_from_db()
    assert handoff.resolved_by == curator and handoff.resolved_at is not None
    assert send(api_client, chat_session, "Oi de novo").json()["reply"] == "De volta."


# --- plug-in points and settings -----------------------------------------------------------------


def test_a_clarification_from_reference_resolution_skips_the_provider(
    api_client, chat_session, scripted_llm, monkeypatch
):
    from conversations.services import turns
    from conversations.services.turns import service

    monkeypatch.setattr(
        service, "references_resolve", lambda **kwargs: turns.TurnContext(clarification="Qual dos dois pedidos?")
    )

    data = send(api_client, chat_session, "E este?").json()

    assert (data["status"], data["reply"], data["handoff"]) == ("clarification", "Qual dos dois pedidos?", None)
    assert scripted_llm.requests == []
    chat_session.refresh_from_db()
    assert chat_session.status == "open"


def test_knowledge_set_bodies_are_delivered_without_a_fetch(api_client, chat_session, scripted_llm, monkeypatch):
    from conversations.prompts import KnowledgeSet
    from conversations.services.turns import agent_loop

    monkeypatch.setattr(
        agent_loop,
        "knowledge_set_for_turn",
        lambda **kwargs: KnowledgeSet(full_ids=("DELIVERY_TIMELINES",), listed_ids=("CLICKSIGN_PROCESS",)),
    )
    scripted_llm.reply_json(answer())

    data = send(api_client, chat_session, "Prazo?").json()

    assert [p["id"] for p in data["packages"]] == ["DELIVERY_TIMELINES"]
    assert "## Knowledge for this message" in scripted_llm.requests[0].system_prompt
    assert body_marker("DELIVERY_TIMELINES") in scripted_llm.requests[0].system_prompt
    assert "## Also relevant (not loaded; ask with s=99 if needed)\n- ::CLICKSIGN_PROCESS" in (
        scripted_llm.requests[0].system_prompt
    )


def test_bad_llm_settings_fail_fast(settings):
    from django.core.exceptions import ImproperlyConfigured

    from llm.runtime import llm_settings

    settings.LLM_PROVIDER = "gpt"
    with pytest.raises(ImproperlyConfigured):
        llm_settings()


def test_illegal_session_transition_is_refused(chat_session):
    from conversations.exceptions import InvalidSessionTransitionError
    from conversations.services import session_transition

    assert session_transition(session=chat_session, status="closed") is True
    assert session_transition(session=chat_session, status="closed") is False  # a no-op is a no-op
    with pytest.raises(InvalidSessionTransitionError):
        session_transition(session=chat_session, status="open")
