"""Hostile input answers 400 naming the field, never 500, on PostgreSQL.

NUL characters and lone surrogates cannot be stored by PostgreSQL; deep JSON
used to hit Python's recursion limit. The walk below sends each of them to
every API route and every admin changelist the URLconf has.
"""

import json

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from accounts.models import Membership
from accounts.services import api_token_create, membership_ensure
from common.input_guard import MAX_JSON_DEPTH, json_depth_exceeds

pytestmark = pytest.mark.django_db

BODIES = {
    "nul value": '{"message": "a\\u0000b", "result_id": "r\\u0000", "entityType": "x\\u0000"}',
    "nul key": '{"totals": {"a\\u0000": 1}, "message": {"k\\u0000": "v"}}',
    "lone surrogate value": '{"message": "\\ud800", "entityId": "\\udfff"}',
    "lone surrogate key": '{"totals": {"\\ud800": 1}}',
    "nul in context": '{"message": "ok", "context": {"a\\u0000": "\\ud800", "page": {"title": "x\\u0000"}}}',
    "deep array": "[" * 1000 + "]" * 1000,
    "deep object": '{"message": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}",
}
CODES = {"VALIDATION_ERROR", "JSON_TOO_DEEP"}
# The turn endpoint's context engine checks "context" itself (INVALID_CONTEXT naming the field).
CONTEXT_CODES = CODES | {"INVALID_CONTEXT"}


def _routes(patterns=None, prefix=""):
    """(route template, converter names) for every URL pattern, recursively."""
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def _api_routes():
    routes = []
    for template, _entry in _routes():
        if template.startswith("api/v1/"):
            routes.append(template)
    assert len(routes) >= 12, routes  # the walk must see the real URLconf
    return routes


def _fill(template: str, str_value: str, int_value: int = 1) -> str:
    out = template
    while "<" in out:
        start, end = out.index("<"), out.index(">")
        converter = out[start + 1 : end].split(":")[0] if ":" in out[start:end] else "str"
        out = out[:start] + (str(int_value) if converter == "int" else str_value) + out[end + 1 :]
    return "/" + out


@pytest.fixture
def boss(tenant):
    """A superuser admin of the tenant: permissions never stop a request before its input is read."""
    user = get_user_model().objects.create_superuser(username="boss", password="x", email="b@example.com")
    membership_ensure(user=user, tenant=tenant, role=Membership.Role.ADMIN)
    api_token_create(user=user, tenant=tenant)
    return user


@pytest.fixture
def boss_session(boss, tenant):
    """A real session, so /sessions/<id>/messages reaches its body instead of a 404."""
    from conversations.agents_seed import agents_seed_ensure
    from conversations.models import Agent, Session

    agents_seed_ensure()
    return Session.objects.create(tenant=tenant, user=boss, agent=Agent.objects.get(slug="atendimento"))


@pytest.fixture
def boss_client(boss):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {boss.auth_token.key}")
    return client


def test_database_is_postgresql():
    assert connection.vendor == "postgresql"


@pytest.mark.parametrize("body_name", sorted(BODIES))
def test_every_api_route_refuses_hostile_bodies_with_400(boss_client, boss_session, catalog, body_name):
    body = BODIES[body_name]
    codes = CONTEXT_CODES if body_name == "nul in context" else CODES
    answered = {}
    for template in _api_routes():
        path = _fill(template, "r1", boss_session.pk)
        for method in ("post", "put", "patch"):
            response = getattr(boss_client, method)(path, data=body, content_type="application/json")
            answered[(method, path)] = response.status_code
            assert response.status_code != 500, (method, path, body_name)
            if response.status_code == 400:
                assert response.json()["error"]["code"] in codes, (method, path, response.json())
            else:  # the method does not exist on this route
                assert response.status_code in (404, 405), (method, path, response.status_code)
    # Every operation that takes a body was reached and refused.
    refused = {key for key, status in answered.items() if status == 400}
    for expected in (
        ("post", "/api/v1/context"),
        ("post", "/api/v1/results"),
        ("post", "/api/v1/sessions"),
        ("post", "/api/v1/ontology/route"),
        ("put", "/api/v1/profile"),
        ("post", "/api/v1/accessible-entities"),
        ("post", f"/api/v1/sessions/{boss_session.pk}/messages"),
    ):
        assert expected in refused, (expected, answered)


def test_every_api_route_refuses_nul_in_path_and_query(boss_client, catalog):
    for template in _api_routes():
        for method in ("get", "delete", "post"):
            if "<str:" in template:
                path = _fill(template, "r%00x")
                response = getattr(boss_client, method)(path)
                assert response.status_code == 400, (method, path, response.status_code)
                assert response.json()["error"]["details"]["fields"] == {"path": ["Null characters are not allowed."]}
            path = _fill(template, "r1")
            for query in ("entityType=%00", "page=1%00", "q%00=1"):
                response = getattr(boss_client, method)(f"{path}?{query}")
                assert response.status_code == 400, (method, path, query, response.status_code)
                assert response.json()["error"]["code"] == "VALIDATION_ERROR"
                [field] = response.json()["error"]["details"]["fields"]
                assert field.startswith("query."), field


def test_the_reported_inputs_name_their_field(api_client):
    response = api_client.get("/api/v1/results/abc%00/explanation")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "VALIDATION_ERROR",
        "message": "Invalid input: path: Null characters are not allowed.",
        "details": {"fields": {"path": ["Null characters are not allowed."]}},
    }

    response = api_client.get("/api/v1/accessible-entities?entityType=%00")
    assert response.status_code == 400
    assert response.json()["error"]["details"]["fields"] == {"query.entityType": ["Null characters are not allowed."]}

    for key, label, reason in (
        ("a\\u0000", "a\\u0000", "Null characters are not allowed in keys."),
        ("\\ud83d", "\\ud83d", "Lone surrogates are not allowed in keys."),
    ):
        body = '{"result_id": "r1", "verdict": "ok", "totals": {"%s": 1}}' % key
        response = api_client.post("/api/v1/results", data=body, content_type="application/json")
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        assert error["code"] == "VALIDATION_ERROR"
        assert error["details"]["fields"] == {f"totals.{label}": [reason]}
    body = '{"result_id": "r1", "verdict": "ok \\ud800"}'
    response = api_client.post("/api/v1/results", data=body, content_type="application/json")
    assert response.json()["error"]["details"]["fields"] == {"verdict": ["Lone surrogates are not allowed."]}
    from explanations.models import Result

    assert not Result.objects.exists()  # nothing half-written


@pytest.mark.parametrize("path", ["/api/v1/context", "/api/v1/results", "/api/v1/ontology/route"])
def test_json_nested_past_the_limit_is_400_and_at_the_limit_is_parsed(api_client, catalog, path):
    deep = '{"message": ' + "[" * 1000 + "]" * 1000 + "}"
    response = api_client.post(path, data=deep, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "JSON_TOO_DEEP"
    assert response.json()["error"]["details"] == {"max_depth": MAX_JSON_DEPTH}
    # At the limit the body is parsed and validated as usual (a field error, not the depth error).
    ok = '{"message": ' + "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1) + "}"
    response = api_client.post(path, data=ok, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] != "JSON_TOO_DEEP"


def test_depth_scan_ignores_brackets_inside_strings():
    assert not json_depth_exceeds(json.dumps({"message": "[" * 5000}).encode())
    assert json_depth_exceeds(("[" * 65 + "]" * 65).encode())
    assert not json_depth_exceeds(("[" * 64 + "]" * 64).encode())
    assert json_depth_exceeds(('{"a\\"[": ' + "[" * 65 + "]" * 65 + "}").encode())


def test_every_admin_changelist_refuses_nul_filters(client, boss):
    client.force_login(boss)
    walked = 0
    for model, _model_admin in admin.site._registry.items():
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for query in ("q=%00", "id__exact=%00", "o=%00", "%00=1"):
            response = client.get(f"{url}?{query}")
            assert response.status_code == 400, (url, query, response.status_code)
        walked += 1
        # And the changelist itself still opens.
        assert client.get(url).status_code == 200, url
    assert walked >= 10


def test_a_nul_in_the_api_token_is_401_not_500(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token a\x00b")  # PostgreSQL refuses a NUL in the token query
    response = client.get("/api/v1/sessions/1")
    assert response.status_code == 401 and response.json()["error"]["code"] == "AUTHENTICATION_FAILED"
