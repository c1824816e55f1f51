"""A dropped database connection: idempotent reads are retried once, anything else is a 503, never a 500.

Only this test database's backends are terminated (pg_terminate_backend filtered by
pid and datname); the shared PostgreSQL server is never touched otherwise.
"""

import psycopg
import pytest
from django.db import connection

from conversations.models import Session

pytestmark = pytest.mark.django_db(transaction=True)


class Terminator:
    """An execute wrapper that terminates this connection's backend before chosen queries."""

    def __init__(self, times: int):
        self.remaining = times
        self.terminated = 0

    def __call__(self, execute, sql, params, many, context):
        if self.remaining > 0:
            self.remaining -= 1
            settings_dict = context["connection"].settings_dict
            pid = context["connection"].connection.info.backend_pid
            with psycopg.connect(
                host=settings_dict["HOST"],
                port=settings_dict["PORT"] or 5432,
                user=settings_dict["USER"],
                dbname=settings_dict["NAME"],
                autocommit=True,
            ) as admin:
                row = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE pid = %s AND datname = current_database()",
                    [pid],
                ).fetchone()
                self.terminated += int(bool(row and row[0]))
        return execute(sql, params, many, context)


def test_an_idempotent_read_is_retried_once_on_a_fresh_connection(api_client, catalog, caplog):
    terminator = Terminator(times=1)
    with connection.execute_wrapper(terminator):
        response = api_client.get("/api/v1/packages")
    assert terminator.terminated == 1
    assert response.status_code == 200, response.content
    assert response.json()["count"] > 0
    assert "db.unavailable action=retry method=GET" in caplog.text


def test_a_read_failing_twice_is_503_with_retry_after(api_client, catalog):
    terminator = Terminator(times=2)
    with connection.execute_wrapper(terminator):
        response = api_client.get("/api/v1/packages")
    assert terminator.terminated == 2
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {
        "error": {
            "code": "DATABASE_UNAVAILABLE",
            "message": "The database is unavailable; retry shortly.",
            "details": {},
        }
    }


def test_a_write_is_not_retried_and_answers_503(api_client, tenant, catalog):
    from conversations.agents_seed import agents_seed_ensure

    agents_seed_ensure()
    terminator = Terminator(times=1)
    with connection.execute_wrapper(terminator):
        response = api_client.post("/api/v1/sessions", {}, format="json")
    assert terminator.terminated == 1
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["error"]["code"] == "DATABASE_UNAVAILABLE"
    assert not Session.objects.exists()  # nothing done, nothing half-done
    # The next request gets a fresh connection.
    assert api_client.post("/api/v1/sessions", {}, format="json").status_code == 201


def test_a_dropped_connection_in_the_admin_is_retried(client, curator):
    client.force_login(curator)
    terminator = Terminator(times=1)
    with connection.execute_wrapper(terminator):
        response = client.get("/admin/knowledge/package/")
    assert terminator.terminated == 1
    assert response.status_code == 200


def test_a_read_only_post_is_retried_like_a_read(api_client, catalog):
    # POST /context writes nothing to the database (database_retry_safe on the view).
    terminator = Terminator(times=1)
    with connection.execute_wrapper(terminator):
        response = api_client.post("/api/v1/context", {"message": "qual o prazo de entrega?"}, format="json")
    assert terminator.terminated == 1
    assert response.status_code == 200, response.content
