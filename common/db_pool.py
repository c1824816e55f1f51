"""Hand a thread's database connection back to the pool before it waits on something slow.

With ``DB_POOL_MAX_SIZE`` set (the production default), each web process shares a
bounded psycopg pool; a request takes a connection on its first query and Django
returns it when the request ends. A turn that waits seconds on a model would hold
its connection all that time, so threads could not outnumber connections. Called
before such a wait, this returns the connection at once; the next query takes one
again (from the pool: no reconnect).
"""

from django.db import DEFAULT_DB_ALIAS, connections


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
