"""Webhook execution against a local host application: signature, idempotency, timeout,
verification, and the operator's retry."""

import pytest
from django.db import connections

from actions.execution import signature_valid
from actions.models import Action, ActionAudit
from actions.services import action_retry
from conversations.models import Message
from tests.actions.conftest import WEBHOOK_SECRET, confirm, equipment_context, say

ALTERE = "Altere isso para 30 dias."


def preview(api_client, chat_session):
    response = say(api_client, chat_session, ALTERE, equipment_context())
    assert response.status_code == 201, response.content
    return response.json()["action"]


def steps(action_id):
    return [(a.step, a.reason) for a in ActionAudit.objects.filter(action_id=action_id).order_by("id")]


@pytest.mark.django_db
def test_the_host_gets_a_signed_body_with_the_idempotency_key(
    api_client, chat_session, webhook_capability, webhook_server, equipment, tenant
):
    action = preview(api_client, chat_session)
    assert confirm(api_client, action).json()["status"] == "verified"
    (request,) = webhook_server.requests
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["idempotency-key"] == action["id"]
    assert headers["content-type"] == "application/json"
    timestamp, signature = headers["x-contexto-timestamp"], headers["x-contexto-signature"]
    assert signature_valid(WEBHOOK_SECRET, timestamp, request.raw, signature)
    assert not signature_valid("another-secret", timestamp, request.raw, signature)
    assert not signature_valid(WEBHOOK_SECRET, timestamp, request.raw.replace(b"30", b"31"), signature)
    assert request.body == {
        "actionId": action["id"],
        "capability": "workPermit.equipment.updateValidity",
        "tenant": tenant.slug,
        "entity": {"type": "equipment", "id": "equipment-827"},
        "target": "workPermit.components.equipment.validity",
        "parameters": {"value": 30, "unit": "days"},
    }


@pytest.mark.django_db(transaction=True)
def test_the_webhook_is_called_outside_any_transaction(
    api_client, chat_session, webhook_capability, webhook_server, equipment
):
    """While the host is being called, another connection already sees the committed 'executing' row."""
    seen = []

    def look(request):
        seen.append(Action.objects.get(pk=request.body["actionId"]).status)
        connections.close_all()  # this thread's own connection

    webhook_server.on_request = look
    action = preview(api_client, chat_session)
    assert confirm(api_client, action).json()["status"] == "verified"
    assert seen == ["executing"]


@pytest.mark.django_db
def test_a_timeout_is_an_honest_failure_and_an_operator_retry_reuses_the_key(
    api_client, chat_session, webhook_capability, webhook_server, equipment, admin_user
):
    webhook_server.sleep(1.5)  # the capability's timeout is 0.5 s
    action = preview(api_client, chat_session)
    response = confirm(api_client, action)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "failed" and body["reason"] == "webhook_timeout"
    assert body["message"] == (
        "Não sei se o campo Validade foi alterado: o sistema não respondeu a tempo. A alteração não foi "
        "confirmada; um operador pode tentar de novo."
    )
    assert "foi alterada para" not in Message.objects.filter(session=chat_session).order_by("-id").first().text
    assert steps(action["id"])[-1] == ("failed", "webhook_timeout")

    retried = action_retry(operator=admin_user, action_id=action["id"])
    assert retried.status == "verified" and retried.attempts == 2
    keys = [r.headers["Idempotency-Key"] for r in webhook_server.requests]
    assert keys == [action["id"], action["id"]], "a retry reaches the host with the same key"
    assert list(webhook_server.applied) == [action["id"]], "the host applied it once"
    assert steps(action["id"])[-2:] == [("executed", ""), ("verified", "")]
    assert ActionAudit.objects.filter(action_id=action["id"], step="verified").get().actor_role == "operator"
    assert Message.objects.filter(session=chat_session).order_by("-id").first().text == (
        "A validade do equipamento foi alterada para 30 dias."
    )


@pytest.mark.django_db
def test_a_host_answering_another_value_is_not_done(
    api_client, chat_session, webhook_capability, webhook_server, equipment
):
    webhook_server.value(25)
    action = preview(api_client, chat_session)
    body = confirm(api_client, action).json()
    assert body["status"] == "failed" and body["reason"] == "verification_mismatch"
    assert (
        body["message"] == "A alteração do campo Validade não foi concluída: o sistema mostra 25 dias, e não 30 dias."
    )
    assert steps(action["id"])[-2:] == [("executed", ""), ("failed", "verification_mismatch")]


@pytest.mark.django_db
def test_a_host_error_is_a_failure(api_client, chat_session, webhook_capability, webhook_server, equipment):
    webhook_server.status(500)
    action = preview(api_client, chat_session)
    body = confirm(api_client, action).json()
    assert body["status"] == "failed" and body["reason"] == "webhook_http_status"
    assert body["message"].startswith("Não consegui alterar o campo Validade")
    assert Action.objects.get(pk=action["id"]).outcome["status_code"] == 500


@pytest.mark.django_db
def test_without_a_secret_nothing_is_sent(
    api_client, chat_session, webhook_capability, webhook_server, equipment, settings
):
    settings.ACTIONS_WEBHOOK_SECRET = ""
    action = preview(api_client, chat_session)
    body = confirm(api_client, action).json()
    assert body["status"] == "failed" and body["reason"] == "webhook_not_configured"
    assert webhook_server.requests == []


@pytest.mark.django_db
def test_only_failed_webhook_actions_can_be_retried(
    api_client, chat_session, webhook_capability, webhook_server, equipment, admin_user
):
    from actions.exceptions import ActionNotRetryableError

    action = preview(api_client, chat_session)
    with pytest.raises(ActionNotRetryableError):
        action_retry(operator=admin_user, action_id=action["id"])  # never confirmed
    confirm(api_client, action)
    with pytest.raises(ActionNotRetryableError):
        action_retry(operator=admin_user, action_id=action["id"])  # verified
    assert len(webhook_server.requests) == 1


@pytest.mark.django_db
def test_the_admin_retry_action_needs_the_operator_permission(
    api_client, chat_session, webhook_capability, webhook_server, equipment, client
):
    from django.apps import apps
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from actions.permissions import action_groups_ensure

    action_groups_ensure(apps)
    webhook_server.status(503)
    action = preview(api_client, chat_session)
    confirm(api_client, action)
    operator = get_user_model().objects.create_user(username="op", password="x", is_staff=True)
    operator.groups.add(Group.objects.get(name="operators"))
    client.force_login(operator)
    response = client.post(
        "/admin/actions/action/", {"action": "retry_execution", "_selected_action": [action["id"]]}, follow=True
    )
    assert response.status_code == 200
    assert Action.objects.get(pk=action["id"]).status == "verified"
    auditor = get_user_model().objects.create_user(username="aud", password="x", is_staff=True)
    auditor.groups.add(Group.objects.get(name="auditors"))
    client.force_login(auditor)
    page = client.get("/admin/actions/action/")
    assert page.status_code == 200
    assert b"retry_execution" not in page.content


@pytest.fixture
def admin_user(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="operadora", password="x", is_staff=True)


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_confirmations_execute_once(
    api_client, chat_session, webhook_capability, webhook_server, equipment, user
):
    """Two tabs press "Aplicar" at once: the row lock lets one through, the other gets 409."""
    import threading

    from rest_framework.test import APIClient

    webhook_server.sleep(0.2)  # keep the first execution in flight while the second arrives
    action = preview(api_client, chat_session)
    results = []

    def press():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {user.auth_token.key}")
        try:
            results.append(confirm(client, action).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == [200, 409]
    assert len(webhook_server.requests) == 1
    assert Action.objects.get(pk=action["id"]).status == "verified"
    assert [s for s, _ in steps(action["id"])].count("confirmed") == 1
