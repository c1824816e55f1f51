"""Context endpoints (schema, accessible entities), the registry import and the admin."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import Membership
from conversations.context import AGENT_CONTEXT_SCHEMA
from conversations.context.models import AccessibleEntity, SemanticElement
from conversations.context.services import SemanticRegistryFileError, semantic_registry_import

pytestmark = pytest.mark.django_db

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "semantic-ids.example.yaml"


@pytest.fixture
def tenant_admin(user):
    Membership.objects.filter(user=user).update(role=Membership.Role.ADMIN)
    return user


# --- /api/v1/context-schema ---------------------------------------------------------------


def test_context_schema_is_published(api_client, anon_client):
    assert anon_client.get("/api/v1/context-schema").status_code == 401
    response = api_client.get("/api/v1/context-schema")
    assert response.status_code == 200
    schema = response.json()
    assert schema == AGENT_CONTEXT_SCHEMA
    assert schema["additionalProperties"] is False
    assert {
        "application",
        "navigation",
        "page",
        "tabs",
        "activeTabId",
        "focus",
        "selection",
        "viewport",
        "user",
    } <= set(schema["properties"])
    assert set(schema["$defs"]["elementType"]["enum"]) >= {"field", "tab", "table", "button"}


# --- /api/v1/accessible-entities --------------------------------------------------------------


def test_a_tenant_admin_grants_lists_and_revokes_entities(api_client, tenant_admin, tenant):
    created = api_client.post(
        "/api/v1/accessible-entities", {"entityType": "workPermit", "entityId": "4821"}, format="json"
    )
    assert created.status_code == 201
    body = created.json()
    assert (body["entityType"], body["entityId"]) == ("workPermit", "4821")
    again = api_client.post(
        "/api/v1/accessible-entities", {"entityType": "workPermit", "entityId": "4821"}, format="json"
    )
    assert (again.status_code, again.json()["id"]) == (200, body["id"])
    api_client.post("/api/v1/accessible-entities", {"entityType": "equipment", "entityId": "827"}, format="json")

    listed = api_client.get("/api/v1/accessible-entities").json()
    assert [(e["entityType"], e["entityId"]) for e in listed["results"]] == [
        ("equipment", "827"),
        ("workPermit", "4821"),
    ]
    filtered = api_client.get("/api/v1/accessible-entities?entityType=workPermit").json()
    assert filtered["count"] == 1

    assert api_client.get(f"/api/v1/accessible-entities/{body['id']}").status_code == 200
    assert api_client.delete(f"/api/v1/accessible-entities/{body['id']}").status_code == 204
    assert not AccessibleEntity.objects.filter(tenant=tenant, entity_id="4821").exists()


def test_a_plain_member_may_read_but_not_grant_or_revoke(api_client, tenant):
    entity = AccessibleEntity.objects.create(tenant=tenant, entity_type="workPermit", entity_id="1")
    assert api_client.get("/api/v1/accessible-entities").status_code == 200
    response = api_client.post(
        "/api/v1/accessible-entities", {"entityType": "workPermit", "entityId": "2"}, format="json"
    )
    assert response.status_code == 403
    assert api_client.delete(f"/api/v1/accessible-entities/{entity.pk}").status_code == 403
    assert AccessibleEntity.objects.count() == 1


def test_entities_are_tenant_scoped(api_client, tenant_admin, other_api_client, other_tenant):
    theirs = AccessibleEntity.objects.create(tenant=other_tenant, entity_type="workPermit", entity_id="9")
    assert api_client.get("/api/v1/accessible-entities").json()["count"] == 0
    assert api_client.get(f"/api/v1/accessible-entities/{theirs.pk}").status_code == 404
    response = api_client.delete(f"/api/v1/accessible-entities/{theirs.pk}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "ACCESSIBLE_ENTITY_NOT_FOUND"
    assert AccessibleEntity.objects.filter(pk=theirs.pk).exists()


def test_bad_entity_input_is_400_and_anonymous_is_401(api_client, tenant_admin, anon_client):
    for body in (
        {"entityType": "workPermit"},
        {"entityType": "a b", "entityId": "1"},
        {"entityType": "x", "entityId": "1", "extra": 1},
    ):
        assert api_client.post("/api/v1/accessible-entities", body, format="json").status_code == 400
    assert AccessibleEntity.objects.count() == 0
    assert anon_client.get("/api/v1/accessible-entities").status_code == 401


# --- semantic registry ---------------------------------------------------------------------------


def test_import_command_loads_the_example_registry_and_is_idempotent(db):
    call_command("import_semantic_ids", str(EXAMPLE))
    validity = SemanticElement.objects.get(semantic_id="workPermit.components.equipment.validity")
    assert (validity.label, validity.type, validity.parent_id) == (
        "Validade",
        "field",
        "workPermit.components.equipment",
    )
    assert SemanticElement.objects.get(semantic_id="quote.pricing").package_ids == ["PRICING_RULES"]
    # A declared parent wins over the dotted one.
    assert SemanticElement.objects.get(semantic_id="equipment.validity").parent_id == "workPermit.components.equipment"
    counts = semantic_registry_import(acting_user=None, text=EXAMPLE.read_text())
    assert counts == {"created": 0, "updated": 0, "unchanged": SemanticElement.objects.count()}


def test_import_accepts_json_and_updates(db):
    semantic_registry_import(acting_user=None, text='[{"id": "a.b", "label": "B"}]')
    counts = semantic_registry_import(
        acting_user=None, text='{"elements": [{"id": "a.b", "label": "Bê", "packages": ["X"]}]}'
    )
    assert counts["updated"] == 1
    assert SemanticElement.objects.get().label == "Bê"


@pytest.mark.parametrize(
    "text",
    [
        "- {label: sem id}",
        "- {id: 'not an id', label: X}",
        "- {id: a.b, label: X, colour: red}",
        "- {id: a.b, label: X, type: widget}",
        "just text",
    ],
)
def test_a_bad_registry_file_imports_nothing(db, text):
    SemanticElement.objects.create(semantic_id="keep.me", label="K")
    with pytest.raises(SemanticRegistryFileError):
        semantic_registry_import(
            acting_user=None, text="- {id: ok.one, label: One}\n" + text if text.startswith("-") else text
        )
    assert list(SemanticElement.objects.values_list("semantic_id", flat=True)) == ["keep.me"]


def test_import_command_reports_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {id: a.b}\n")
    with pytest.raises(CommandError):
        call_command("import_semantic_ids", str(bad))
    with pytest.raises(CommandError):
        call_command("import_semantic_ids", str(tmp_path / "missing.yaml"))


# --- admin ---------------------------------------------------------------------------------------


def test_admin_pages_for_registry_entities_and_snapshots_load(curator, tenant):
    from django.contrib.auth.models import Permission

    curator.user_permissions.add(*Permission.objects.filter(content_type__app_label="conversations"))
    client = Client()
    client.force_login(curator)
    SemanticElement.objects.create(semantic_id="a.b", label="B")
    AccessibleEntity.objects.create(tenant=tenant, entity_type="workPermit", entity_id="1")
    for url in (
        "/admin/conversations/semanticelement/",
        "/admin/conversations/semanticelement/import/",
        "/admin/conversations/accessibleentity/",
        "/admin/conversations/contextsnapshot/",
    ):
        assert client.get(url).status_code == 200, url

    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("ids.yaml", EXAMPLE.read_bytes())
    response = client.post("/admin/conversations/semanticelement/import/", {"file": upload})
    assert response.status_code == 302
    assert SemanticElement.objects.filter(semantic_id="workPermit.components.equipment.validity").exists()


@pytest.mark.parametrize("method", ["delete", "post", "get"])
def test_a_malformed_entity_path_is_a_json_404_for_a_token_client(tenant_admin, method):
    # Real clients are not exempt from CSRF the way the test client is: the JSON catch-all
    # for unknown /api/ paths answered DELETE/POST with Django's HTML CSRF 403.
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=tenant_admin)[0].key}")
    response = getattr(client, method)("/api/v1/accessible-entities/abc")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
