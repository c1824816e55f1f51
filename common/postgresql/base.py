"""Django's PostgreSQL backend; its connection pool checks a connection it hands out without a round trip.

With ``CONN_HEALTH_CHECKS`` Django gives psycopg's pool ``ConnectionPool.check_connection``: an
empty statement sent to PostgreSQL every time a connection leaves the pool. A turn takes a
connection twice (it gives its connection back before it waits on the model, common/db_pool.py),
so that was two round trips per turn that did nothing else, about 5 % of the web process's CPU
per turn plus PostgreSQL's side. ``common.db_pool.pooled_connection_check`` asks the operating
system instead and sends the statement only when the server has spoken or hung up since.
"""

from django.db.backends.postgresql import base as postgresql
from psycopg_pool import ConnectionPool

from common.db_pool import pooled_connection_check


class DatabaseWrapper(postgresql.DatabaseWrapper):
    @property
    def pool(self):
        pool = super().pool
        # Django builds the pool with psycopg's check (no setting chooses another): swapped once.
        if pool is not None and getattr(pool, "_check", None) is ConnectionPool.check_connection:
            pool._check = pooled_connection_check
        return pool
