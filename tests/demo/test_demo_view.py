"""The demo page's view: where it is served and to whom (no browser needed)."""

import json
import re

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def demo_on(settings):
    settings.DEMO_ENABLED = True


def test_demo_is_off_unless_enabled(client, user, settings):
    settings.DEMO_ENABLED = False
    client.force_login(user)
    assert client.get("/demo/").status_code == 404


def test_demo_requires_login(client, db, demo_on):
    response = client.get("/demo/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_demo_page_serves_the_work_permit_and_the_client_config(client, user, demo_on):
    client.force_login(user)
    response = client.get("/demo/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'Permissão de Trabalho <span class="number">PT-2026-004821</span>' in html
    for label in ("Geral", "Componentes", "Documentos", "Andaime", "Guindaste", "Validade (dias)", "Data de Início"):
        assert label in html
    assert 'type="module" src="/static/demo/demo.js"' in html
    config = json.loads(
        re.search(r'<script id="demo-config" type="application/json">(.*?)</script>', html, re.DOTALL).group(1)
    )
    assert config["endpoint"] == "/api/v1"
    assert config["csrfToken"] and config["permit"] == {"id": "4821", "number": "PT-2026-004821"}
    assert "csrftoken" in response.cookies  # session auth + CSRF for the API calls
    assert "Token " not in html and user.auth_token.key not in html, "no API token in the page"


def test_demo_page_explains_a_user_without_tenant(client, db, demo_on):
    lonely = get_user_model().objects.create_user(username="sem-org", password="x")
    client.force_login(lonely)
    response = client.get("/demo/")
    assert response.status_code == 403
    assert "ensure_demo" in response.content.decode()


def test_static_modules_are_served_by_django(client, user, demo_on):
    from django.contrib.staticfiles import finders

    for path in ("contexto/contexto.js", "contexto/contexto-react.js", "demo/demo.js", "demo/demo.css"):
        assert finders.find(path), path


def test_demo_catalog_folder_is_loaded_with_the_bundled_one(db, settings):
    from knowledge.catalog import get_active_catalog
    from knowledge.services import catalog_sync_bundled

    base = settings.BASE_DIR / "knowledge"
    catalog_sync_bundled(directories=[base / "catalog", base / "catalog_demo"])
    catalog = get_active_catalog()
    assert len(catalog) == 15 + 7
    validity = catalog.resolve("VALIDADE")
    assert validity.package_id == "EQUIPMENT_VALIDITY"
    assert "workPermit.components.equipment.validity" in validity.semantic_ids
    assert catalog.resolve("ANDAIME").package_id == "SCAFFOLD"
