"""Shared fixtures: tenants, users, authenticated API clients, the catalog."""

import os

import pytest
from django.contrib.auth import get_user_model
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from accounts.services import api_token_create, curator_ensure, tenant_get_or_create
from knowledge.catalog import clear_catalog_cache
from tests.support.llm_server import llm_server  # noqa: F401  (the scripted OpenAI-compatible server fixture)


# Property tests: no per-example deadline on a shared 2-core machine; in CI, a fixed
# seed so a run is reproducible (locally they keep exploring new examples).
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")


@pytest.fixture(autouse=True)
def _fresh_catalog_cache():
    # The in-memory catalog is keyed on the version; tests recreate the DB, so drop it.
    clear_catalog_cache()
    yield
    clear_catalog_cache()


@pytest.fixture
def tenant(db):
    return tenant_get_or_create(slug="acme", name="Acme")


@pytest.fixture
def other_tenant(db):
    return tenant_get_or_create(slug="globex", name="Globex")


@pytest.fixture
def user(tenant):
    user = get_user_model().objects.create_user(username="ana", password="x")
    api_token_create(user=user, tenant=tenant)
    return user


@pytest.fixture
def other_user(other_tenant):
    user = get_user_model().objects.create_user(username="bruno", password="x")
    api_token_create(user=user, tenant=other_tenant)
    return user


@pytest.fixture
def curator(tenant):
    return curator_ensure(username="curadora", tenant=tenant, password="curator-pass")


@pytest.fixture
def staff_reader(tenant):
    """Staff without the curators group: may read the admin, not edit."""
    return get_user_model().objects.create_user(username="leitor", password="x", is_staff=True)


def _token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.auth_token.key}")
    return client


@pytest.fixture
def api_client(user):
    return _token_client(user)


@pytest.fixture
def other_api_client(other_user):
    return _token_client(other_user)


@pytest.fixture
def anon_client():
    return APIClient()


@pytest.fixture
def catalog(db):
    """The bundled sample catalog loaded into the database."""
    from knowledge.services import catalog_sync_bundled

    catalog_sync_bundled()
    from knowledge.catalog import get_active_catalog

    return get_active_catalog()
