"""Hand a thread's database connection back to the pool before it waits on something slow.

With ``DB_POOL_MAX_SIZE`` set (the production default), each web process shares a
bounded psycopg pool; a request takes a connection on its first query and Django
returns it when the request ends. A turn that waits seconds on a model would hold
its connection all that time, so threads could not outnumber connections. Called
before such a wait, this returns the connection at once; the next query takes one
again (from the pool: no reconnect).
"""

import select

from django.db import DEFAULT_DB_ALIAS, connections
from psycopg import OperationalError
from psycopg_pool import ConnectionPool


def db_connection_release(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """Return this thread's connection to the pool; True if one was returned.

    A no-op without a pool (a persistent connection costs a reconnect to give up),
    inside a transaction (its work must commit on that connection), and when no
    connection is open.
    """
    connection = connections[alias]
    if getattr(connection, "pool", None) is None or connection.in_atomic_block or connection.connection is None:
        return False
    connection.close()
    return True


def pooled_connection_check(conn) -> None:
    """The pool's check of a connection it hands out, with no round trip when nothing happened.

    An idle connection's socket has nothing to read unless the server sent something since the
    connection came back to the pool: the error it sends when the backend is terminated (restart,
    failover, ``pg_terminate_backend``) and the end of the stream that follows, or a notice.
    Then, and only then, the empty statement of psycopg's own check (``ConnectionPool.
    check_connection``) is sent: it reads what arrived and raises if the connection is dead, so
    the pool replaces it exactly as before. A connection closed on this side fails at once.
    A backend terminated after this check is the same race psycopg's check has (the request
    gets 503 ``DATABASE_UNAVAILABLE`` or its retry, common/db_resilience.py).
    """
    if conn.closed:
        raise OperationalError("the connection is closed")
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    if poller.poll(0):  # readable, hung up or in error: ask the server
        ConnectionPool.check_connection(conn)
