"""Sessions and messages over the API: creation, reading, tenancy, idempotency."""

import logging

import pytest

from conversations.models import Message, MessageRole, MessageStatus, Session
from tests.conversations.helpers import send
from tests.conversations.context.samples import minimal_context

pytestmark = pytest.mark.django_db


def test_create_session_with_the_default_agent(api_client, agents):
    response = api_client.post("/api/v1/sessions", {}, format="json")

    assert response.status_code == 201
    data = response.json()
    assert data["agent"] == "atendimento"
    assert data["status"] == "open"
    assert data["collected_packages"] == []
    assert data["context_enrichment_count"] == 0
    session = Session.objects.get(pk=data["id"])
    assert session.tenant.slug == "acme"
    assert session.user.username == "ana"


def test_create_session_with_a_named_agent(api_client, agents):
    data = api_client.post("/api/v1/sessions", {"agent": "comercial"}, format="json").json()
    assert data["agent"] == "comercial"


def test_create_session_with_an_unknown_agent_is_rejected(api_client, agents):
    response = api_client.post("/api/v1/sessions", {"agent": "nobody"}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "AGENT_NOT_FOUND"
    assert not Session.objects.exists()


def test_create_session_with_an_inactive_agent_is_rejected(api_client, agents):
    agents["comercial"].is_active = False
    agents["comercial"].save()
    response = api_client.post("/api/v1/sessions", {"agent": "comercial"}, format="json")
    assert response.json()["error"]["code"] == "AGENT_NOT_FOUND"


def test_create_session_refuses_unknown_fields(api_client, agents):
    response = api_client.post("/api/v1/sessions", {"agnt": "comercial"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_sessions_need_authentication(anon_client, chat_session):
    assert anon_client.post("/api/v1/sessions", {}, format="json").status_code == 401
    assert anon_client.get(f"/api/v1/sessions/{chat_session.pk}").status_code == 401


def test_get_session_shows_its_state(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 99, "context_needed": "PRECOS"}).reply_json({"s": 0, "message": "ok"})
    send(api_client, chat_session, "Preço?")

    data = api_client.get(f"/api/v1/sessions/{chat_session.pk}").json()

    assert data["id"] == chat_session.pk
    assert data["collected_packages"] == ["PRICING_RULES"]
    assert data["context_enrichment_count"] == 1


def test_messages_are_listed_oldest_first_and_paginated(api_client, chat_session, scripted_llm):
    for i in range(3):
        scripted_llm.reply_json({"s": 0, "message": f"resposta {i}"})
        send(api_client, chat_session, f"pergunta {i}")

    data = api_client.get(f"/api/v1/sessions/{chat_session.pk}/messages?page_size=4").json()

    assert data["count"] == 6
    assert [(m["role"], m["text"]) for m in data["results"]] == [
        ("user", "pergunta 0"),
        ("assistant", "resposta 0"),
        ("user", "pergunta 1"),
        ("assistant", "resposta 1"),
    ]
    assert data["results"][1]["reply_to"] == data["results"][0]["id"]
    assert data["next"]


def test_handoff_messages_show_their_reason_in_the_list(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 99, "context_needed": "NOPE"})
    send(api_client, chat_session, "?")
    results = api_client.get(f"/api/v1/sessions/{chat_session.pk}/messages").json()["results"]
    assert results[1]["status"] == "handoff"
    assert results[1]["handoff"]["reason"] == "uncertainty"


def test_message_body_is_validated(api_client, chat_session):
    for body in ({}, {"message": ""}, {"message": "oi", "extra": 1}, {"message": "oi", "context": [1]}):
        response = api_client.post(f"/api/v1/sessions/{chat_session.pk}/messages", body, format="json")
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    "body, field, message",
    [
        ({}, "message", "This field is required."),
        ({"message": ""}, "message", "This field may not be blank."),
        ({"message": "   "}, "message", "This field may not be blank."),
        ({"message": None}, "message", "This field may not be null."),
        ({"message": "x" * 8001}, "message", "Ensure this field has no more than 8000 characters."),
        ({"message": 123}, "message", "Not a valid string."),
        ({"message": 1.5}, "message", "Not a valid string."),
        ({"message": True}, "message", "Not a valid string."),
        ({"message": ["oi"]}, "message", "Not a valid string."),
        ({"message": {"text": "oi"}}, "message", "Not a valid string."),
        ({"message": "a\x00b"}, "message", "Null characters are not allowed."),
        ({"message": "oi", "text": "oi"}, "text", "Unknown field."),
        ({"message": "oi", "context": "page=1"}, "context", "Must be a JSON object."),
    ],
    ids=[
        "missing",
        "empty",
        "blank",
        "null",
        "too-long",
        "int",
        "float",
        "bool",
        "list",
        "object",
        "nul-char",
        "unknown-field",
        "context-not-object",
    ],
)
def test_bad_message_bodies_get_the_json_error_shape_and_leave_no_rows(
    api_client, chat_session, scripted_llm, body, field, message
):
    response = api_client.post(f"/api/v1/sessions/{chat_session.pk}/messages", body, format="json")

    assert response.status_code == 400, body
    assert response.json() == {
        "error": {
            "code": "VALIDATION_ERROR",
            "message": f"Invalid input: {field}: {message}",
            "details": {"fields": {field: [message]}},
        }
    }
    assert scripted_llm.requests == []
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    "raw, code",
    [("{not json", "MALFORMED_REQUEST"), ('["oi"]', "VALIDATION_ERROR"), ('"oi"', "VALIDATION_ERROR")],
    ids=["malformed", "list", "string"],
)
def test_a_body_that_is_not_a_json_object_is_rejected(api_client, chat_session, raw, code):
    response = api_client.post(f"/api/v1/sessions/{chat_session.pk}/messages", raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert set(response.json()["error"]) == {"code", "message", "details"}


def test_a_message_of_the_maximum_length_is_accepted(api_client, chat_session, scripted_llm):
    scripted_llm.reply("ok")
    assert send(api_client, chat_session, "x" * 8000).status_code == 201


def test_a_numeric_agent_slug_is_a_type_error(api_client, agents):
    response = api_client.post("/api/v1/sessions", {"agent": 5}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"fields": {"agent": ["Not a valid string."]}}
    assert not Session.objects.exists()


def test_context_object_is_accepted(api_client, chat_session, scripted_llm):
    scripted_llm.reply("ok")
    response = send(api_client, chat_session, "oi", context=minimal_context())
    assert response.status_code == 201
    assert response.json()["contextSnapshotId"] is not None


def test_an_incomplete_context_is_rejected_naming_the_field(api_client, chat_session, scripted_llm):
    response = send(api_client, chat_session, "oi", context={"page": {"id": "quote-42"}})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_CONTEXT"
    assert scripted_llm.requests == []


# --- tenancy ----------------------------------------------------------------------------------------


def test_another_tenants_session_is_not_found(other_api_client, chat_session, scripted_llm):
    for response in (
        other_api_client.get(f"/api/v1/sessions/{chat_session.pk}"),
        other_api_client.get(f"/api/v1/sessions/{chat_session.pk}/messages"),
        send(other_api_client, chat_session, "oi"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "SESSION_NOT_FOUND"
    assert scripted_llm.requests == []
    assert not Message.objects.exists()


def test_unknown_session_is_not_found(api_client, agents):
    assert api_client.get("/api/v1/sessions/999999").status_code == 404


# --- idempotency -------------------------------------------------------------------------------------


def test_idempotent_retry_returns_the_first_response_without_a_second_call(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 99, "context_needed": "PRECOS"}).reply_json({"s": 0, "message": "R$ 10"})

    first = send(api_client, chat_session, "Preço?", key="abc-123")
    retry = send(api_client, chat_session, "Preço?", key="abc-123")

    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert retry["Idempotent-Replayed"] == "true"
    assert len(scripted_llm.requests) == 2
    assert chat_session.messages.count() == 2
    chat_session.refresh_from_db()
    assert chat_session.context_enrichment_count == 1


def test_idempotent_retry_after_a_handoff_returns_the_handoff(api_client, chat_session, scripted_llm):
    scripted_llm.status(500)
    first = send(api_client, chat_session, "oi", key="k1").json()
    retry = send(api_client, chat_session, "oi", key="k1")
    assert retry.status_code == 201  # not SESSION_NOT_OPEN: it is the same request
    assert retry.json() == first


def test_same_key_with_another_body_is_rejected(api_client, chat_session, scripted_llm):
    scripted_llm.reply("ok")
    send(api_client, chat_session, "oi", key="k1")

    response = send(api_client, chat_session, "outra coisa", key="k1")

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_key_is_scoped_to_the_session(api_client, chat_session, scripted_llm, agents, tenant, user):
    other = Session.objects.create(tenant=tenant, user=user, agent=agents["comercial"])
    scripted_llm.reply("um").reply("dois")
    assert send(api_client, chat_session, "oi", key="k1").json()["reply"] == "um"
    assert send(api_client, other, "oi", key="k1").json()["reply"] == "dois"


def test_duplicate_while_the_first_is_running_is_a_conflict(api_client, chat_session, scripted_llm):
    from conversations.services.turns import request_fingerprint

    Message.objects.create(
        session=chat_session,
        role=MessageRole.USER,
        text="oi",
        status=MessageStatus.RECEIVED,
        idempotency_key="k1",
        request_fingerprint=request_fingerprint(text="oi", context=None),
    )

    response = send(api_client, chat_session, "oi", key="k1")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "IDEMPOTENT_REQUEST_IN_PROGRESS"
    assert scripted_llm.requests == []


def _stuck_inbound(chat_session, *, key, age_seconds):
    from datetime import timedelta

    from django.utils import timezone

    from conversations.services.turns import request_fingerprint

    inbound = Message.objects.create(
        session=chat_session,
        role=MessageRole.USER,
        text="oi",
        status=MessageStatus.RECEIVED,
        idempotency_key=key,
        request_fingerprint=request_fingerprint(text="oi", context=None),
    )
    Message.objects.filter(pk=inbound.pk).update(created_at=timezone.now() - timedelta(seconds=age_seconds))
    return inbound


def test_a_retry_of_a_turn_abandoned_by_a_dead_worker_runs_again(api_client, chat_session, scripted_llm, settings):
    settings.IDEMPOTENT_TURN_STALE_SECONDS = 600
    stuck = _stuck_inbound(chat_session, key="k1", age_seconds=601)
    scripted_llm.reply("De novo.")

    response = send(api_client, chat_session, "oi", key="k1")

    assert response.status_code == 201
    assert response.json()["reply"] == "De novo."
    assert not Message.objects.filter(pk=stuck.pk).exists()
    roles = list(chat_session.messages.values_list("role", "status"))
    assert roles == [("user", "processed"), ("assistant", "answered")]
    assert send(api_client, chat_session, "oi", key="k1").json() == response.json()  # and is idempotent again
    assert len(scripted_llm.requests) == 1


def test_a_turn_younger_than_the_stale_limit_is_still_in_progress(api_client, chat_session, scripted_llm, settings):
    settings.IDEMPOTENT_TURN_STALE_SECONDS = 600
    stuck = _stuck_inbound(chat_session, key="k1", age_seconds=590)

    response = send(api_client, chat_session, "oi", key="k1")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "IDEMPOTENT_REQUEST_IN_PROGRESS"
    assert Message.objects.filter(pk=stuck.pk).exists()
    assert scripted_llm.requests == []


def test_bad_idempotency_key_is_rejected(api_client, chat_session):
    response = send(api_client, chat_session, "oi", key="x" * 201)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_IDEMPOTENCY_KEY"


# --- logs --------------------------------------------------------------------------------------------


def test_logs_carry_ids_and_codes_never_text(api_client, chat_session, scripted_llm, caplog):
    scripted_llm.reply_json({"s": 99, "context_needed": "PRECOS"}).reply_json({"s": 0, "message": "SEGREDO-RESPOSTA"})
    scripted_llm.status(500)
    caplog.set_level(logging.DEBUG)

    send(api_client, chat_session, "SEGREDO-PERGUNTA")
    send(api_client, chat_session, "SEGREDO-DOIS")

    assert "turn finished" in caplog.text
    assert "provider unavailable" in caplog.text
    assert "SEGREDO" not in caplog.text
    assert "Regras de preço" not in caplog.text


# --- paths that match no endpoint ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/sessions/abc/messages", "/api/v1/sessions/1/mesages", "/api/v1/session"])
def test_a_post_to_an_unknown_api_path_is_a_json_404_even_with_csrf_checks(user, path):
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)  # like curl or a real API client: no CSRF cookie
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.auth_token.key}")

    response = client.post(path, {"message": "oi"}, format="json")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_the_schema_lists_the_handoff_reason_codes(api_client):
    schema = api_client.get("/api/schema/?format=json").json()

    handoff = schema["components"]["schemas"]["HandoffOutput"]["properties"]["reason"]
    assert handoff["$ref"] == "#/components/schemas/HandoffReasonEnum"
    enum = schema["components"]["schemas"]["HandoffReasonEnum"]["enum"]
    assert set(enum) >= {
        "uncertainty",
        "budget_exceeded",
        "iteration_cap",
        "provider_unavailable",
        "invalid_reply",
        "agent_request",
    }


def test_logs_never_carry_text_with_the_router_on(api_client, chat_session, scripted_llm, caplog, settings, curator):
    from conversations.models import Handoff
    from conversations.services import handoff_resolve

    settings.AGENT_KNOWLEDGE_ROUTER = True
    caplog.set_level(logging.DEBUG)
    scripted_llm.reply_json({"s": 99, "context_needed": "PRECOS"}).reply_json({"s": 0, "message": "SEGREDO-R1"})
    scripted_llm.reply('{"s": 0, "message": "SEGREDO-R2"')  # unparseable → invalid_reply
    scripted_llm.reply_json({"s": 99, "context_needed": "SEGREDO-ID"})  # unknown → uncertainty
    scripted_llm.reply_json({"s": 90, "reason": "SEGREDO-MOTIVO"})

    for n, text in enumerate(["SEGREDO-P1 preço do sequenciamento", "SEGREDO-P2", "SEGREDO-P3", "SEGREDO-P4"]):
        assert send(api_client, chat_session, text).status_code == 201
        if n:
            handoff_resolve(acting_user=curator, handoff=Handoff.objects.filter(resolved_at__isnull=True).get())

    reasons = list(Handoff.objects.order_by("id").values_list("reason", flat=True))
    assert reasons == ["invalid_reply", "uncertainty", "agent_request"]
    assert "route_context" in caplog.text and "turn finished" in caplog.text
    assert "SEGREDO" not in caplog.text
    assert "sequenciamento" not in caplog.text


def test_a_session_id_beyond_bigint_is_not_found(api_client, agents):
    huge = "9" * 25
    for response in (
        api_client.get(f"/api/v1/sessions/{huge}"),
        api_client.get(f"/api/v1/sessions/{huge}/messages"),
        api_client.post(f"/api/v1/sessions/{huge}/messages", {"message": "oi"}, format="json"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "SESSION_NOT_FOUND"
