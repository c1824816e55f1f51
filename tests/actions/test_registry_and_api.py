"""The capability registry (import, admin, API), the auditors' read-only trail, the schema."""

from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from actions.exceptions import CapabilityFileError
from actions.models import ActionAudit, Capability
from actions.permissions import action_groups_ensure
from actions.registry import capability_registry_import
from tests.actions.conftest import DEMO_CAPABILITIES, equipment_context, say

pytestmark = pytest.mark.django_db

GOOD = """
- id: crm.deal.updateAmount
  label: Alterar valor
  semantic_ids: [crm.deal.amount]
  parameters: {type: object, properties: {value: {type: number, minimum: 0}}}
  execution: webhook
  webhook_url: https://host.example/hooks/contexto
"""


def test_import_creates_then_reports_unchanged_then_updates():
    assert capability_registry_import(acting_user=None, text=GOOD) == {"created": 1, "updated": 0, "unchanged": 0}
    assert capability_registry_import(acting_user=None, text=GOOD) == {"created": 0, "updated": 0, "unchanged": 1}
    changed = GOOD.replace("Alterar valor", "Alterar o valor")
    assert capability_registry_import(acting_user=None, text=changed) == {"created": 0, "updated": 1, "unchanged": 0}
    capability = Capability.objects.get()
    assert (capability.intent, capability.requires_confirmation, capability.execution) == (
        "UPDATE_FIELD",
        True,
        "webhook",
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("- {id: a.b, label: X, semantic_ids: [a.b], parameters: {type: string}}", "parameters_schema"),
        (
            "- {id: a.b, label: X, semantic_ids: [], parameters: {type: object, properties: {value: {}}}}",
            "semantic_ids",
        ),
        (
            "- {id: a.b, label: X, semantic_ids: [a.b], execution: webhook, parameters: {type: object, properties: {value: {}}}}",
            "webhook_url",
        ),
        ("- {id: a.b, label: X, colour: red}", "unknown keys colour"),
        ("- {label: X}", "'id' and 'label' are required"),
        ("{id: [", "Not YAML/JSON"),
        (
            "- {id: a.b, label: X, semantic_ids: [a.b], parameters: {type: object, properties: {value: {type: 12}}}}",
            "Not a valid JSON Schema",
        ),
    ],
)
def test_a_bad_file_imports_nothing(text, message):
    with pytest.raises(CapabilityFileError, match=message):
        capability_registry_import(
            acting_user=None, text=GOOD + text.replace("- ", "\n- ", 1) if text.startswith("-") else text
        )
    assert Capability.objects.count() == 0


def test_the_command_imports_the_demo_file(capsys):
    call_command("import_capabilities", str(DEMO_CAPABILITIES))
    assert "2 created" in capsys.readouterr().out
    assert set(Capability.objects.values_list("capability_id", flat=True)) == {
        "workPermit.equipment.updateValidity",
        "workPermit.equipment.updateStartDate",
    }
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_capabilities", "/nonexistent.yaml")


def test_capabilities_api_lists_the_registry(api_client, capabilities, anon_client):
    Capability.objects.filter(capability_id="workPermit.equipment.updateStartDate").update(is_active=False)
    response = api_client.get("/api/v1/capabilities")
    assert response.status_code == 200
    (item,) = response.json()["results"]
    assert item == {
        "id": "workPermit.equipment.updateValidity",
        "label": "Alterar a validade do equipamento",
        "description": "Sets how many days an equipment's inspection stays valid in the work permit.",
        "intent": "UPDATE_FIELD",
        "semanticIds": ["workPermit.components.equipment.validity"],
        "entityType": "equipment",
        "parameters": {
            "type": "object",
            "properties": {"value": {"type": "integer", "minimum": 1, "maximum": 90}, "unit": {"const": "days"}},
            "required": ["value", "unit"],
            "additionalProperties": False,
        },
        "roles": ["member", "admin"],
        "requiresConfirmation": True,
        "execution": "client",
    }
    assert anon_client.get("/api/v1/capabilities").status_code == 401


def test_action_endpoints_answer_json_errors(api_client, capabilities):
    missing = api_client.get("/api/v1/actions/not-a-uuid")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "ACTION_NOT_FOUND"
    url = "/api/v1/actions/00000000-0000-0000-0000-000000000000/confirm"
    assert api_client.post(url, {}, format="json").json()["error"]["code"] == "VALIDATION_ERROR"
    assert api_client.post(url, {"confirmationToken": "x", "extra": 1}, format="json").status_code == 400
    assert api_client.post(url, {"confirmationToken": "x"}, format="json").status_code == 404
    report = "/api/v1/actions/00000000-0000-0000-0000-000000000000/report"
    bad = api_client.post(report, {"value": {"a": 1}, "context": []}, format="json")
    assert bad.status_code == 400 and set(bad.json()["error"]["details"]["fields"]) == {"value", "context"}


def test_the_openapi_schema_documents_the_actions_api(api_client):
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path in ("/api/v1/capabilities", "/api/v1/actions/{action_id}/confirm", "/api/v1/actions/{action_id}/report"):
        assert path in schema["paths"], path
    turn = schema["components"]["schemas"]["TurnResponse"]["properties"]
    assert "action" in turn


def test_auditors_read_the_trail_and_change_nothing(client, api_client, chat_session, capabilities, equipment):
    action_groups_ensure(apps)
    say(api_client, chat_session, "Altere isso para 30 dias.", equipment_context())
    auditor = get_user_model().objects.create_user(username="auditora", password="x", is_staff=True)
    auditor.groups.add(Group.objects.get(name="auditors"))
    assert auditor.has_perm("actions.view_actionaudit")
    assert not auditor.has_perm("actions.change_actionaudit") and not auditor.has_perm("actions.retry_action")
    client.force_login(auditor)
    listing = client.get("/admin/actions/actionaudit/")
    assert listing.status_code == 200 and b"previewed" in listing.content
    row = ActionAudit.objects.first()
    detail = client.get(f"/admin/actions/actionaudit/{row.pk}/change/")
    assert detail.status_code == 200 and b'name="_save"' not in detail.content
    assert client.post(f"/admin/actions/actionaudit/{row.pk}/delete/").status_code == 403
    assert client.get("/admin/actions/capability/").status_code == 200
    assert client.get("/admin/actions/capability/import/").status_code == 403


def test_the_groups_come_from_the_migration():
    """The data migration created them (the test database was migrated)."""
    assert set(Group.objects.filter(name__in=["auditors", "operators"]).values_list("name", flat=True)) == {
        "auditors",
        "operators",
    }
    assert Group.objects.get(name="auditors").permissions.filter(codename="view_actionaudit").exists()


def test_a_curator_imports_capabilities_from_the_admin(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    staff = get_user_model().objects.create_superuser(username="root", password="x")
    client.force_login(staff)
    upload = SimpleUploadedFile("caps.yaml", Path(DEMO_CAPABILITIES).read_bytes())
    response = client.post("/admin/actions/capability/import/", {"file": upload}, follow=True)
    assert response.status_code == 200
    assert b"2 created" in response.content
    assert Capability.objects.count() == 2
