"""`/` is a small landing page, and the admin speaks for Contexto."""

import pytest


def test_the_landing_page_links_to_admin_docs_and_health(client, settings):
    settings.DEMO_ENABLED = False
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Contexto</h1>" in html
    for href in ('href="/admin/"', 'href="/api/docs/"', 'href="/healthz"'):
        assert href in html
    assert 'href="/demo/"' not in html  # the demo is not served: no link to a 404
    assert 'href="/metrics"' not in html  # anonymous visitors do not get the metrics link
    assert "http://testserver/mcp/" in html


def test_the_demo_link_follows_demo_enabled(client, settings):
    settings.DEMO_ENABLED = True
    assert 'href="/demo/"' in client.get("/").content.decode()


@pytest.mark.parametrize(("is_staff", "shown"), [(True, True), (False, False)])
def test_metrics_are_linked_for_staff_only(client, db, django_user_model, is_staff, shown):
    client.force_login(django_user_model.objects.create_user("u", password="x", is_staff=is_staff))
    assert ('href="/metrics"' in client.get("/").content.decode()) is shown


def test_the_admin_is_branded_contexto(client, db):
    html = client.get("/admin/login/").content.decode()
    assert "Contexto administration" in html
    assert "Django administration" not in html
    assert "<title>Log in | Contexto admin</title>" in html
