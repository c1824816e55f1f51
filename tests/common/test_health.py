import pytest


def test_healthz_answers_without_auth(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_database_cache_and_broker(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {"database": "ok", "cache": "ok", "broker": "ok"}
    assert response.json()["status"] == "ok"


@pytest.mark.django_db
def test_readyz_reports_a_stopped_broker_as_degraded_not_unready(client, settings):
    # The API keeps serving without a broker (results wait for the sweep): taking every
    # web process out of rotation would turn a broker outage into a full outage.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    settings.CELERY_TASK_ALWAYS_EAGER = False
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"] == {"database": "ok", "cache": "ok", "broker": "unavailable"}
    assert body["degraded"] == ["broker"]


@pytest.mark.django_db
def test_readyz_reports_an_unreachable_database_with_503(client, monkeypatch):
    from django.db import OperationalError

    from common import health

    def database_down():
        raise OperationalError("connection refused")

    monkeypatch.setitem(health.CHECKS, "database", database_down)
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"] == {"database": "unavailable", "cache": "ok", "broker": "ok"}
    assert body["error"]["details"]["failed"] == ["database"]
    assert body["error"]["message"] == "Unavailable: database."


@pytest.mark.django_db(transaction=True)
def test_the_database_probe_leaves_no_statement_timeout_on_its_connection(monkeypatch):
    # With the connection pool, close() hands the connection back to the pool: a session-level
    # timeout set by the probe would stay on it for whatever request takes it next.
    from django.db import connections

    from common import health

    connection = connections["default"]
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        before = cursor.fetchone()[0]
    monkeypatch.setattr(connection, "close", lambda: None)  # as the pool keeps it open
    assert health._check_database() == "ok"
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == before
