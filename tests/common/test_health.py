import pytest


def test_healthz_answers_without_auth(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_database_and_broker(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {"database": "ok", "broker": "ok"}


@pytest.mark.django_db
def test_readyz_reports_a_stopped_broker_with_503(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    settings.CELERY_TASK_ALWAYS_EAGER = False
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["broker"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["error"]["code"] == "DEPENDENCY_UNAVAILABLE"
    assert body["error"]["details"]["failed"] == ["broker"]


@pytest.mark.django_db
def test_readyz_reports_an_unreachable_database_with_503(client, monkeypatch):
    from django.db import OperationalError

    from common import health

    def database_down():
        raise OperationalError("connection refused")

    monkeypatch.setattr(health, "_check_database", database_down)
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"] == {"database": "unavailable", "broker": "ok"}
    assert body["error"]["details"]["failed"] == ["database"]
    assert body["error"]["message"] == "Unavailable: database."
