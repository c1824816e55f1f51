"""The pool's check of a connection it hands out: no round trip for a healthy idle connection,
and a terminated backend still replaced (common/db_pool.py, common/postgresql/base.py).

Only this test database's own backends are terminated (by pid, from a separate connection)."""

import time

import psycopg
import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from common.db_pool import pooled_connection_check
from common.postgresql.base import DatabaseWrapper

pytestmark = pytest.mark.django_db(transaction=True)


def _conninfo() -> dict:
    settings_dict = connection.settings_dict
    return {
        "host": settings_dict["HOST"],
        "port": settings_dict["PORT"] or 5432,
        "user": settings_dict["USER"],
        "dbname": settings_dict["NAME"],
    }


def _terminate(pid: int) -> None:
    with psycopg.connect(**_conninfo(), autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]


def _wait_readable(conn, seconds: float = 5.0) -> None:
    """The termination reaches the client's socket asynchronously."""
    import select

    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    deadline = time.monotonic() + seconds
    while not poller.poll(50) and time.monotonic() < deadline:
        pass


@pytest.fixture
def round_trips(monkeypatch):
    sent = []
    real = ConnectionPool.check_connection
    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(lambda conn: sent.append(conn) or real(conn)))
    return sent


def test_a_healthy_idle_connection_passes_without_a_round_trip(round_trips):
    with psycopg.connect(**_conninfo(), autocommit=True) as conn:
        conn.execute("SELECT 1").fetchone()
        pooled_connection_check(conn)
        pooled_connection_check(conn)
    assert round_trips == []


def test_a_terminated_backend_fails_the_check(round_trips):
    with psycopg.connect(**_conninfo(), autocommit=True) as conn:
        _terminate(conn.info.backend_pid)
        _wait_readable(conn)
        with pytest.raises(psycopg.OperationalError):
            pooled_connection_check(conn)
    assert len(round_trips) == 1  # the socket said something happened: the server was asked


def test_a_closed_connection_fails_the_check():
    conn = psycopg.connect(**_conninfo(), autocommit=True)
    conn.close()
    with pytest.raises(psycopg.OperationalError):
        pooled_connection_check(conn)


def test_the_pool_replaces_a_terminated_connection_with_the_cheap_check():
    settings_dict = {
        **connection.settings_dict,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {**connection.settings_dict["OPTIONS"], "pool": {"min_size": 1, "max_size": 1, "timeout": 5}},
    }
    wrapper = DatabaseWrapper(settings_dict, alias="pool-check-test")
    pool = wrapper.pool
    try:
        assert pool._check is pooled_connection_check  # not psycopg's round trip
        pool.open(wait=True)
        with pool.connection() as conn:
            first_pid = conn.info.backend_pid
        conn = pool.getconn()
        assert conn.info.backend_pid == first_pid  # the same connection, handed out again
        pool.putconn(conn)
        _terminate(first_pid)
        _wait_readable(conn)
        with pool.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid != first_pid  # replaced, not served broken
    finally:
        wrapper.close_pool()
