"""Numbers are numbers and strings are strings: no silent coercion of what a client sent."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from accounts.models import Membership
from accounts.services import api_token_create, membership_ensure
from conversations.context.models import AccessibleEntity
from explanations.models import Result

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(tenant):
    user = get_user_model().objects.create_user(username="chefe", password="x")
    membership_ensure(user=user, tenant=tenant, role=Membership.Role.ADMIN)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=user, tenant=tenant).key}")
    return client


def _field_error(response, field):
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    return error["details"]["fields"][field]


@pytest.mark.parametrize("entity_id", [4821, 48.21, True, ["4821"]])
def test_a_non_string_entity_id_is_refused(admin_client, entity_id):
    response = admin_client.post(
        "/api/v1/accessible-entities", {"entityType": "workPermit", "entityId": entity_id}, format="json"
    )
    assert _field_error(response, "entityId") == ["Not a valid string."]
    assert not AccessibleEntity.objects.exists()
    ok = admin_client.post(
        "/api/v1/accessible-entities", {"entityType": "workPermit", "entityId": "4821"}, format="json"
    )
    assert ok.status_code == 201


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"budget": ""}, "budget"),
        ({"budget": "  "}, "budget"),
        ({"target": True}, "target"),
        ({"totals": {"custo": ""}}, "totals"),
        ({"totals": {"custo": [1]}}, "totals"),
    ],
)
def test_an_empty_or_non_numeric_number_is_refused(api_client, extra, field):
    response = api_client.post("/api/v1/results", {"result_id": "r1", "verdict": "ok", **extra}, format="json")
    _field_error(response, field)
    assert not Result.objects.exists()


def test_numbers_and_numeric_strings_still_pass(api_client):
    response = api_client.post(
        "/api/v1/results",
        {"result_id": "r1", "verdict": "ok", "budget": 1250000, "target": "1250000.50", "totals": {"custo": 10.5}},
        format="json",
    )
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("value", ["500", 500.0, True, None])
def test_integer_options_take_json_integers_only(api_client, catalog, value):
    response = api_client.post("/api/v1/context", {"message": "prazo", "budget_tokens": value}, format="json")
    _field_error(response, "budget_tokens")
    ok = api_client.post("/api/v1/context", {"message": "prazo", "budget_tokens": 500}, format="json")
    assert ok.status_code == 200
