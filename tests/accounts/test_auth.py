from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import get_resolver
from rest_framework.test import APIClient

from accounts.models import Membership


def _api_routes() -> list[str]:
    """Every concrete GET-able path under /api/v1/ (parameters filled with a dummy)."""
    routes = []

    def walk(patterns, prefix=""):
        for p in patterns:
            if hasattr(p, "url_patterns"):
                walk(p.url_patterns, prefix + str(p.pattern))
            else:
                routes.append(prefix + str(p.pattern))

    walk(get_resolver().url_patterns)
    concrete = []
    for route in routes:
        if not route.startswith("api/v1/"):
            continue
        for token in ("<str:", "<int:", "<uuid:", "<slug:", "<"):
            while token in route:
                start = route.index(token)
                end = route.index(">", start)
                value = "00000000-0000-0000-0000-000000000000" if "uuid" in route[start:end] else "1"
                route = route[:start] + value + route[end + 1 :]
        concrete.append("/" + route.replace("^", "").replace("$", ""))
    return concrete


@pytest.mark.django_db
def test_every_api_endpoint_requires_authentication(anon_client):
    routes = _api_routes()
    assert "/api/v1/packages" in routes
    for route in routes:
        for method in ("get", "post", "put", "patch", "delete"):
            response = getattr(anon_client, method)(route)
            assert response.status_code in (401, 405), (method, route, response.status_code)
            if response.status_code == 401:
                assert response.json()["error"]["code"] == "NOT_AUTHENTICATED"


def test_a_bad_token_is_401(db):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = client.get("/api/v1/packages")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "AUTHENTICATION_FAILED"


def test_a_user_without_tenant_is_403(db):
    user = get_user_model().objects.create_user(username="loner")
    client = APIClient()
    client.force_authenticate(user)
    response = client.get("/api/v1/packages")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "NO_TENANT"


def test_an_inactive_tenant_is_403(api_client, tenant):
    tenant.is_active = False
    tenant.save()
    assert api_client.get("/api/v1/packages").status_code == 403


def test_session_authentication_works_for_the_browser(client, user):
    client.force_login(user)
    assert client.get("/api/v1/packages").status_code == 200


def test_create_api_token_prints_a_token_and_makes_a_member(tenant, capsys):
    get_user_model().objects.create_user(username="joana")
    call_command("create_api_token", "joana", "--tenant", "acme")
    token = capsys.readouterr().out.strip()
    assert len(token) == 40
    membership = Membership.objects.get(user__username="joana")
    assert membership.tenant == tenant
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/v1/packages").status_code == 200


def test_create_api_token_refuses_unknown_tenant_and_user(tenant):
    with pytest.raises(CommandError, match="Unknown tenant"):
        call_command("create_api_token", "joana", "--tenant", "nope")
    with pytest.raises(CommandError, match="Unknown user"):
        call_command("create_api_token", "joana", "--tenant", "acme")


def test_create_api_token_refuses_a_second_tenant(user, other_tenant):
    with pytest.raises(CommandError, match="already belongs to another tenant"):
        call_command("create_api_token", user.username, "--tenant", other_tenant.slug)


def test_ensure_demo_prints_the_token_once(db, capsys):
    call_command("ensure_demo")
    first = capsys.readouterr().out
    assert "API token" in first
    call_command("ensure_demo")
    second = capsys.readouterr().out
    assert "API token" not in second and "token unchanged" in second


def test_ensure_demo_prints_where_the_app_is_served(db, capsys):
    # scripts/run passes its HOST:PORT, so the printed links work on another port too.
    call_command("ensure_demo", "--base-url", "http://127.0.0.1:8790/")
    out = capsys.readouterr().out
    assert "at http://127.0.0.1:8790/admin/" in out
    assert "http://127.0.0.1:8790/api/v1/packages" in out
    assert ":8000" not in out


def test_create_tenant_then_a_token_for_it(db, capsys):
    call_command("create_tenant", "initech", "--name", "Initech")
    assert "created" in capsys.readouterr().out
    call_command("create_api_token", "peter", "--tenant", "initech", "--create-user")
    assert len(capsys.readouterr().out.strip()) == 40
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_tenant", "initech")
    with pytest.raises(CommandError, match="slug"):
        call_command("create_tenant", "Not A Slug")


def test_create_api_token_with_role_admin_makes_a_tenant_administrator(tenant, user, capsys):
    call_command("create_api_token", "maria", "--tenant", "acme", "--create-user", "--role", "admin")
    assert Membership.objects.get(user__username="maria").role == Membership.Role.ADMIN
    # an existing member is promoted; without --role the role is kept
    call_command("create_api_token", user.username, "--tenant", "acme", "--role", "admin")
    assert Membership.objects.get(user=user).role == Membership.Role.ADMIN
    call_command("create_api_token", user.username, "--tenant", "acme")
    assert Membership.objects.get(user=user).role == Membership.Role.ADMIN
    with pytest.raises(CommandError):
        call_command("create_api_token", "maria", "--tenant", "acme", "--role", "owner")


def test_a_tenant_administrator_may_grant_accessible_entities_and_a_member_may_not(tenant, user, capsys):
    call_command("create_api_token", "maria", "--tenant", "acme", "--create-user", "--role", "admin")
    admin_token = capsys.readouterr().out.strip()
    entity = {"entityType": "workPermit", "entityId": "1"}
    member = APIClient()
    member.credentials(HTTP_AUTHORIZATION=f"Token {user.auth_token.key}")
    assert member.post("/api/v1/accessible-entities", entity, format="json").status_code == 403
    admin = APIClient()
    admin.credentials(HTTP_AUTHORIZATION=f"Token {admin_token}")
    assert admin.post("/api/v1/accessible-entities", entity, format="json").status_code == 201


def test_the_demo_account_curates_and_audits(db):
    call_command("ensure_demo", "--validator", "validator", stdout=StringIO())
    User = get_user_model()
    assert set(User.objects.get(username="curator").groups.values_list("name", flat=True)) == {"curators", "auditors"}
    validator = User.objects.get(username="validator")
    assert list(validator.groups.values_list("name", flat=True)) == ["validators"]
    assert not validator.has_usable_password()
    assert validator.has_perm("ontology.validate_critical_chunk")


def test_the_token_query_builds_what_select_related_would(user, tenant, django_assert_num_queries):
    from rest_framework.authtoken.models import Token

    from accounts.authentication import token_with_tenant

    expected = Token.objects.select_related("user", "user__membership__tenant").get(user=user)
    with django_assert_num_queries(1):
        token = token_with_tenant(Token, expected.key)
        # everything HasTenant and the views read is cached on the instances: no further query
        assert token.user.membership.tenant == tenant
        assert token.user.membership.user is token.user
    for got, want in [
        (token, expected),
        (token.user, expected.user),
        (token.user.membership, expected.user.membership),
        (token.user.membership.tenant, expected.user.membership.tenant),
    ]:
        fields = type(want)._meta.concrete_fields
        assert [getattr(got, f.attname) for f in fields] == [getattr(want, f.attname) for f in fields]
        assert not got._state.adding and got._state.db == "default"
    assert token_with_tenant(Token, "no-such-token") is None


def test_a_token_of_a_user_without_tenant_is_403(db):
    from rest_framework.authtoken.models import Token

    user = get_user_model().objects.create_user(username="loner")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    response = client.get("/api/v1/packages")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "NO_TENANT"


def test_a_token_of_an_inactive_user_is_401(api_client, user):
    user.is_active = False
    user.save()
    response = api_client.get("/api/v1/packages")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "AUTHENTICATION_FAILED"
