"""Seed §38 end to end through the API: intent → capability → policy → preview → confirm →
execution → verification → the agent's sentence, with the audit trail of every path."""

import datetime as dt
import hashlib
import re

import pytest
from django.utils import timezone

from actions.models import Action, ActionAudit, Capability
from conversations.context.models import AccessibleEntity
from conversations.models import Message
from tests.actions.conftest import START_DATE, VALIDITY, confirm, equipment_context, report, say

pytestmark = pytest.mark.django_db

ALTERE = "Altere isso para 30 dias."
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def steps(action_id):
    return [(a.step, a.reason) for a in ActionAudit.objects.filter(action_id=action_id).order_by("id")]


def preview_turn(api_client, chat_session, context=None):
    response = say(api_client, chat_session, ALTERE, context or equipment_context())
    assert response.status_code == 201, response.content
    return response.json()


def test_seed_38_preview_confirm_apply_verify_then_the_agent_says_it(api_client, chat_session, capabilities, equipment):
    data = preview_turn(api_client, chat_session)
    assert data["intent"] == {"intent": "UPDATE_FIELD", "target": VALIDITY, "value": 30, "unit": "days"}
    action = data["action"]
    assert action["capability"] == "workPermit.equipment.updateValidity"
    assert action["status"] == "needs_confirmation"
    assert action["execution"] == "client"
    assert action["preview"]["before"] == "20 dias" and action["preview"]["after"] == "30 dias"
    assert action["preview"]["confirmationToken"] and action["preview"]["expiresAt"]
    assert data["reply"] == "Vou alterar o campo Validade de Andaime AND-0127 de 20 dias para 30 dias. Confirma?"
    reply = Message.objects.get(pk=data["message_id"])
    assert reply.llm_calls == 0, "an action is decided by the planner and the policy, never improvised by the model"
    # The preview authorizes nothing: the action waits.
    assert Action.objects.get(pk=action["id"]).status == "needs_confirmation"

    confirmed = confirm(api_client, action)
    assert confirmed.status_code == 200, confirmed.content
    assert confirmed.json()["status"] == "confirmed" and confirmed.json()["message"] is None

    # The page applied it (its handler returned 30) and its next snapshot shows "30 dias" on Validade.
    done = report(api_client, action, 30, equipment_context(value="30 dias", version=8))
    assert done.status_code == 200, done.content
    body = done.json()
    assert body["status"] == "verified"
    assert body["message"] == "A validade do equipamento foi alterada para 30 dias."
    assert isinstance(body["contextSnapshotId"], int)
    last = Message.objects.filter(session=chat_session).order_by("-id").first()
    assert (last.role, last.text) == ("assistant", "A validade do equipamento foi alterada para 30 dias.")
    assert steps(action["id"]) == [
        ("proposed", ""),
        ("previewed", ""),
        ("confirmed", ""),
        ("executed", ""),
        ("verified", ""),
    ]


def test_audit_rows_hold_hashes_only(api_client, chat_session, capabilities, equipment, user):
    data = preview_turn(api_client, chat_session)
    confirm(api_client, data["action"])
    report(api_client, data["action"], 30, equipment_context(value="30 dias", version=8))
    rows = list(ActionAudit.objects.filter(action_id=data["action"]["id"]))
    assert len(rows) == 5
    for row in rows:
        for name in ("parameters_hash", "entity_hash", "context_hash", "utterance_hash"):
            assert HEX64.match(getattr(row, name)), name
        assert row.actor_id == user.pk and row.actor_role == "member"
        assert row.capability_id == "workPermit.equipment.updateValidity"
        text = " ".join(str(getattr(row, f.name)) for f in ActionAudit._meta.fields)
        for secret in ("Altere", "30 dias", "equipment-827", "Andaime", "20 dias"):
            assert secret not in text
    # Keyed hashes: not the plain SHA-256 of the utterance (a guess cannot be checked without the key).
    assert rows[0].utterance_hash != hashlib.sha256(ALTERE.encode()).hexdigest()
    # The context hash is the stored snapshot's content hash.
    from conversations.context.models import ContextSnapshot

    snapshot = ContextSnapshot.objects.get(pk=data["contextSnapshotId"])
    assert rows[0].context_hash == snapshot.sha256


def test_audit_rows_are_immutable(api_client, chat_session, capabilities, equipment):
    data = preview_turn(api_client, chat_session)
    row = ActionAudit.objects.filter(action_id=data["action"]["id"]).first()
    row.reason = "edited"
    with pytest.raises(Exception, match="immutable"):
        row.save()
    with pytest.raises(Exception, match="immutable"):
        row.delete()
    with pytest.raises(Exception, match="immutable"):
        ActionAudit.objects.filter(pk=row.pk).update(reason="edited")
    with pytest.raises(Exception, match="immutable"):
        ActionAudit.objects.all().delete()
    assert ActionAudit.objects.get(pk=row.pk).reason == ""


def test_a_preview_never_confirmed_changes_nothing(api_client, chat_session, webhook_capability, webhook_server):
    AccessibleEntity.objects.create(tenant=chat_session.tenant, entity_type="workPermit", entity_id="4821")
    AccessibleEntity.objects.create(tenant=chat_session.tenant, entity_type="equipment", entity_id="equipment-827")
    data = preview_turn(api_client, chat_session)
    assert data["action"]["status"] == "needs_confirmation"
    # Nothing reached the host, and a report without a confirmation is refused.
    assert webhook_server.requests == []
    refused = report(api_client, data["action"], 30, equipment_context(value="30 dias", version=8))
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "ACTION_NOT_AWAITING_REPORT"
    assert Action.objects.get(pk=data["action"]["id"]).status == "needs_confirmation"
    assert steps(data["action"]["id"]) == [("proposed", ""), ("previewed", "")]


def test_confirm_twice_executes_once(api_client, chat_session, webhook_capability, webhook_server, equipment):
    data = preview_turn(api_client, chat_session)
    first = confirm(api_client, data["action"])
    assert first.status_code == 200, first.content
    assert first.json()["status"] == "verified"
    assert first.json()["message"] == "A validade do equipamento foi alterada para 30 dias."
    second = confirm(api_client, data["action"])
    assert second.status_code == 409
    assert second.json()["error"] == {
        "code": "ACTION_NOT_AWAITING_CONFIRMATION",
        "message": "This action is not waiting for a confirmation (already confirmed, denied or finished).",
        "details": {"status": "verified"},
    }
    assert len(webhook_server.requests) == 1
    assert [s for s, _ in steps(data["action"]["id"])].count("executed") == 1


def test_the_same_intent_is_the_same_action(api_client, chat_session, capabilities, equipment):
    """uuid5 of the intent: a retried turn (same Idempotency-Key) replays, a new message is a new action."""
    body = {"message": ALTERE, "context": equipment_context()}
    url = f"/api/v1/sessions/{chat_session.pk}/messages"
    first = api_client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1").json()
    again = api_client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1").json()
    assert again["action"]["id"] == first["action"]["id"]
    assert Action.objects.count() == 1
    from actions.services import action_id_for

    assert first["action"]["id"] == str(
        action_id_for(
            tenant_id=chat_session.tenant_id,
            message_id=first["message_id"] - 1,
            capability_id="workPermit.equipment.updateValidity",
            entity=("equipment", "equipment-827"),
            target=VALIDITY,
            parameters={"value": 30, "unit": "days"},
        )
    )


def test_a_date_field_refuses_30_dias_naming_the_expected_form(api_client, chat_session, capabilities, equipment):
    context = equipment_context(focus=START_DATE, label="Data de Início", value="2026-09-01")
    response = say(api_client, chat_session, "Altere isso para 30 dias.", context)
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["intent"]["target"] == START_DATE
    assert data["status"] == "clarification"
    assert data["reply"] == (
        "O campo Data de Início recebe uma data (AAAA-MM-DD, por exemplo 2026-09-15), não uma duração. "
        "Qual data devo usar?"
    )
    assert data["clarification"]["reason"] == "invalid_parameters"
    assert data["action"]["status"] == "denied" and data["action"]["reason"] == "invalid_parameters"
    assert data["action"]["preview"] is None
    assert steps(data["action"]["id"]) == [("proposed", ""), ("denied", "invalid_parameters")]


def test_a_validity_out_of_range_names_the_range(api_client, chat_session, capabilities, equipment):
    data = say(api_client, chat_session, "Altere isso para 120 dias.", equipment_context()).json()
    assert data["status"] == "clarification"
    assert data["reply"] == "O campo Validade recebe um número inteiro de dias entre 1 e 90. Qual valor devo usar?"
    assert data["action"]["status"] == "denied"


def test_a_role_without_the_capability_is_denied_and_audited(
    api_client, chat_session, capabilities, equipment, admin_member
):
    Capability.objects.filter(capability_id="workPermit.equipment.updateValidity").update(roles=["admin"])
    data = preview_turn(api_client, chat_session)
    assert data["action"]["status"] == "denied" and data["action"]["reason"] == "role_not_allowed"
    assert data["reply"] == "Você não tem permissão para alterar o campo Validade."
    assert data["action"]["preview"] is None
    assert steps(data["action"]["id"]) == [("proposed", ""), ("denied", "role_not_allowed")]
    assert ActionAudit.objects.get(action_id=data["action"]["id"], step="denied").actor_role == "member"
    # The role is the membership's: a context claiming "admin" changes nothing.
    claimed = equipment_context(version=8)
    claimed["user"]["roles"] = ["admin"]
    again = say(api_client, chat_session, ALTERE, claimed).json()
    assert again["action"]["reason"] == "role_not_allowed"
    # An admin member of the same tenant gets the preview.
    admin_user, admin_client = admin_member
    from conversations.models import Session

    admin_session = Session.objects.create(tenant=chat_session.tenant, user=admin_user, agent=chat_session.agent)
    allowed = say(admin_client, admin_session, ALTERE, equipment_context()).json()
    assert allowed["action"]["status"] == "needs_confirmation"


def test_a_role_revoked_before_confirming_is_denied_at_confirmation(api_client, chat_session, capabilities, equipment):
    data = preview_turn(api_client, chat_session)
    Capability.objects.filter(capability_id="workPermit.equipment.updateValidity").update(roles=["admin"])
    response = confirm(api_client, data["action"])
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "ACTION_DENIED"
    assert response.json()["error"]["details"]["reason"] == "role_not_allowed"
    assert Action.objects.get(pk=data["action"]["id"]).status == "denied"
    assert steps(data["action"]["id"])[-1] == ("denied", "role_not_allowed")


def test_another_tenants_entity_is_403_and_leaves_no_audit(
    api_client, other_api_client, other_user, chat_session, capabilities, equipment
):
    from conversations.models import Session

    other_session = Session.objects.create(
        tenant=other_user.membership.tenant, user=other_user, agent=chat_session.agent
    )
    response = say(other_api_client, other_session, ALTERE, equipment_context())
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "CONTEXT_FORBIDDEN"
    assert Action.objects.count() == 0 and ActionAudit.objects.count() == 0
    # Acme's own action cannot be read, confirmed or reported by the other tenant, and they leave no row.
    data = preview_turn(api_client, chat_session)
    before = ActionAudit.objects.count()
    for call in (
        lambda: other_api_client.get(f"/api/v1/actions/{data['action']['id']}"),
        lambda: confirm(other_api_client, data["action"]),
        lambda: report(other_api_client, data["action"], 30, equipment_context(version=9)),
    ):
        denied = call()
        assert denied.status_code == 404, denied.content
        assert denied.json()["error"]["code"] == "ACTION_NOT_FOUND"
    assert ActionAudit.objects.count() == before
    assert Action.objects.get(pk=data["action"]["id"]).status == "needs_confirmation"


def test_a_report_naming_another_tenants_record_is_403_and_writes_nothing(
    api_client, chat_session, capabilities, equipment
):
    data = preview_turn(api_client, chat_session)
    confirm(api_client, data["action"])
    before = ActionAudit.objects.count()
    response = report(
        api_client, data["action"], 30, equipment_context(value="30 dias", version=8, entity="equipment-999")
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "CONTEXT_FORBIDDEN"
    assert ActionAudit.objects.count() == before
    assert Action.objects.get(pk=data["action"]["id"]).status == "confirmed"


def test_a_wrong_token_or_another_user_cannot_confirm(api_client, chat_session, capabilities, equipment, admin_member):
    data = preview_turn(api_client, chat_session)
    url = f"/api/v1/actions/{data['action']['id']}/confirm"
    wrong = api_client.post(url, {"confirmationToken": "not-the-token"}, format="json")
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "ACTION_CONFIRMATION_INVALID"
    _, admin_client = admin_member
    stranger = confirm(admin_client, data["action"])
    assert stranger.status_code == 403 and stranger.json()["error"]["code"] == "ACTION_FORBIDDEN"
    assert Action.objects.get(pk=data["action"]["id"]).status == "needs_confirmation"
    assert steps(data["action"]["id"])[2:] == [("denied", "bad_token"), ("denied", "not_requester")]
    assert confirm(api_client, data["action"]).status_code == 200


def test_an_expired_preview_cannot_be_confirmed(api_client, chat_session, capabilities, equipment):
    data = preview_turn(api_client, chat_session)
    Action.objects.filter(pk=data["action"]["id"]).update(preview_expires_at=timezone.now() - dt.timedelta(seconds=1))
    response = confirm(api_client, data["action"])
    assert response.status_code == 409 and response.json()["error"]["code"] == "ACTION_PREVIEW_EXPIRED"
    expired = Action.objects.get(pk=data["action"]["id"])
    assert expired.status == "denied"
    assert (
        expired.outcome["message"] == "A proposta de alterar o campo Validade expirou; peça de novo para ver uma nova."
    )
    assert steps(data["action"]["id"])[-1] == ("denied", "preview_expired")


def test_client_verification_mismatch_is_not_done(api_client, chat_session, capabilities, equipment):
    data = preview_turn(api_client, chat_session)
    confirm(api_client, data["action"])
    # The handler says 30, but the page's next snapshot still shows 20: not done.
    response = report(api_client, data["action"], 30, equipment_context(value="20 dias", version=8))
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "failed" and body["reason"] == "verification_mismatch"
    assert (
        body["message"] == "A alteração do campo Validade não foi concluída: o sistema mostra 20 dias, e não 30 dias."
    )
    assert "alterada para" not in Message.objects.filter(session=chat_session).order_by("-id").first().text
    assert steps(data["action"]["id"])[-2:] == [("executed", ""), ("failed", "verification_mismatch")]


def test_client_report_on_another_record_is_not_done(api_client, chat_session, capabilities, equipment):
    AccessibleEntity.objects.create(tenant=chat_session.tenant, entity_type="equipment", entity_id="equipment-828")
    data = preview_turn(api_client, chat_session)
    confirm(api_client, data["action"])
    body = report(
        api_client, data["action"], 30, equipment_context(value="30 dias", version=8, entity="equipment-828")
    ).json()
    assert body["status"] == "failed" and body["reason"] == "verification_other_record"


def test_a_field_without_a_capability_is_refused_plainly(api_client, chat_session, capabilities, equipment):
    context = equipment_context(focus="workPermit.components.equipment.type", label="Tipo de Equipamento", value="x")
    data = say(api_client, chat_session, "Altere isso para 3.", context).json()
    assert data["action"]["status"] == "denied" and data["action"]["reason"] == "no_capability"
    assert data["action"]["capability"] is None
    assert (
        data["reply"] == "Não consigo alterar o campo Tipo de Equipamento por aqui: nenhuma ação disponível faz isso."
    )
    assert Message.objects.get(pk=data["message_id"]).llm_calls == 0
    assert steps(data["action"]["id"]) == [("proposed", ""), ("denied", "no_capability")]


def test_the_planner_climbs_to_a_parent_and_asks_when_several_fit(api_client, chat_session, capabilities, equipment):
    Capability.objects.all().delete()
    schema = {"type": "object", "properties": {"value": {"type": "integer"}, "unit": {}}}
    for cid in ("workPermit.equipment.edit", "workPermit.equipment.override"):
        Capability.objects.create(
            capability_id=cid,
            label=cid.split(".")[-1],
            semantic_ids=["workPermit.components.equipment"],
            parameters_schema=schema,
        )
    data = preview_turn(api_client, chat_session)
    assert data["status"] == "clarification"
    assert data["reply"] == "Há mais de uma forma de alterar o campo Validade: edit / override. Qual devo usar?"
    assert [o["capabilityId"] for o in data["clarification"]["options"]] == [
        "workPermit.equipment.edit",
        "workPermit.equipment.override",
    ]
    assert data["action"] is None
    Capability.objects.filter(capability_id="workPermit.equipment.override").delete()
    one = say(api_client, chat_session, ALTERE, equipment_context(version=8)).json()
    assert one["action"]["capability"] == "workPermit.equipment.edit"
    assert one["action"]["status"] == "needs_confirmation"


def test_a_capability_without_confirmation_runs_in_the_turn(
    api_client, chat_session, webhook_capability, webhook_server, equipment
):
    webhook_capability.requires_confirmation = False
    webhook_capability.save()
    data = preview_turn(api_client, chat_session)
    assert data["action"]["status"] == "verified"
    assert data["reply"] == "A validade do equipamento foi alterada para 30 dias."
    assert len(webhook_server.requests) == 1


def test_turn_without_an_intent_has_a_null_action(api_client, chat_session, capabilities, equipment):
    data = say(api_client, chat_session, "Explique isso.", equipment_context()).json()
    assert data["action"] is None


def test_a_bad_or_stale_report_is_a_json_error_and_changes_nothing(api_client, chat_session, capabilities, equipment):
    from conversations.context.models import ContextSnapshot

    data = preview_turn(api_client, chat_session)
    confirm(api_client, data["action"])
    before = (ContextSnapshot.objects.count(), ActionAudit.objects.count())
    invalid = equipment_context(value="30 dias", version=8)
    invalid["dom"] = "<div>"
    response = report(api_client, data["action"], 30, invalid)
    assert response.status_code == 400 and response.json()["error"]["code"] == "INVALID_CONTEXT"
    stale = equipment_context(value="30 dias", version=8)
    stale["capturedAt"] = (timezone.now() - dt.timedelta(seconds=310)).isoformat()
    response = report(api_client, data["action"], 30, stale)
    assert response.status_code == 409 and response.json()["error"]["code"] == "STALE_CONTEXT_AGE"
    older = report(api_client, data["action"], 30, equipment_context(value="30 dias", version=3))
    assert older.status_code == 409 and older.json()["error"]["code"] == "STALE_CONTEXT_VERSION"
    assert (ContextSnapshot.objects.count(), ActionAudit.objects.count()) == before
    assert Action.objects.get(pk=data["action"]["id"]).status == "confirmed"
    # The report that follows still verifies it.
    assert report(api_client, data["action"], 30, equipment_context(value="30 dias", version=8)).json()["status"] == (
        "verified"
    )


def test_the_preview_shows_the_old_value_only_when_the_page_showed_it_for_that_field(
    api_client, chat_session, capabilities, equipment
):
    # Focus on Data de Início, but the message names Validade: the focus's value is not Validade's.
    context = equipment_context(focus=START_DATE, label="Data de Início", value="2026-09-01")
    data = say(api_client, chat_session, "Altere a Validade para 30 dias.", context).json()
    assert data["action"]["status"] == "needs_confirmation", data
    assert data["action"]["preview"]["before"] is None
    assert data["reply"] == "Vou alterar o campo Validade de Andaime AND-0127 para 30 dias. Confirma?"


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda: Capability.objects.update(is_active=False), "capability_inactive"),
        (lambda: AccessibleEntity.objects.filter(entity_id="equipment-827").delete(), "entity_forbidden"),
    ],
)
def test_what_changed_since_the_preview_is_checked_at_confirmation(
    api_client, chat_session, capabilities, equipment, change, reason
):
    data = preview_turn(api_client, chat_session)
    change()
    response = confirm(api_client, data["action"])
    assert response.status_code == 403
    assert response.json()["error"]["details"]["reason"] == reason
    assert steps(data["action"]["id"])[-1] == ("denied", reason)


def test_postgresql_refuses_raw_edits_of_audit_rows_but_lets_a_user_go(
    api_client, chat_session, capabilities, equipment, user
):
    from django.db import DatabaseError, connection, transaction

    data = preview_turn(api_client, chat_session)
    row = ActionAudit.objects.filter(action_id=data["action"]["id"]).first()
    for sql in (
        "UPDATE actions_actionaudit SET reason = 'edited' WHERE id = %s",
        "UPDATE actions_actionaudit SET actor_id = NULL, reason = 'x' WHERE id = %s",
        "DELETE FROM actions_actionaudit WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [row.pk])
    assert ActionAudit.objects.get(pk=row.pk).reason == ""
    # A deleted user leaves the receipts, unlinked.
    from rest_framework.authtoken.models import Token

    Token.objects.filter(user=user).delete()
    user.delete()
    assert ActionAudit.objects.filter(action_id=data["action"]["id"], actor__isnull=True).count() == 2
