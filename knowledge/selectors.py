import threading
from contextlib import contextmanager

from django.db import connection
from django.db.models import QuerySet

from knowledge.models import CatalogState, Package, PackageRevision

_turn = threading.local()
# Written by hand: the ORM compiled this one-row read on every call, and every turn reads it.
_VERSION_SQL = 'SELECT "{table}"."version" FROM "{table}" WHERE "{table}"."id" = %s'.format(
    table=CatalogState._meta.db_table
)


def catalog_version_get() -> int:
    """The active catalog's version: read from the database, or once per block of
    ``catalog_version_read_once``."""
    memo = getattr(_turn, "memo", None)
    if memo is None:
        return _catalog_version_read()
    if memo[0] is None:
        memo[0] = _catalog_version_read()
    return memo[0]


# The same read as a scalar subquery, for a turn's statement that reads the version along with
# its own row (one round trip fewer per turn; ``catalog_version_seen``). NULL without a state row.
CATALOG_VERSION_SUBSELECT = '(SELECT "{table}"."version" FROM "{table}" WHERE "{table}"."id" = 1)'.format(
    table=CatalogState._meta.db_table
)


def catalog_version_seen(version: int | None) -> None:
    """Inside ``catalog_version_read_once``: a version another statement of this block read
    (``CATALOG_VERSION_SUBSELECT``) is the block's read, so the first ``catalog_version_get``
    costs no query. Outside such a block, or once the block has its version, it does nothing."""
    memo = getattr(_turn, "memo", None)
    if memo is not None and memo[0] is None:
        memo[0] = version or 0


def _catalog_version_read() -> int:
    with connection.cursor() as cursor:
        cursor.execute(_VERSION_SQL, [1])
        row = cursor.fetchone()
    return (row[0] if row else 0) or 0


@contextmanager
def catalog_version_read_once():
    """Within the block (one agent turn, in this thread) the catalog version is read once: the
    router's index and the turn's catalog each asked for it, two round trips for one value, and
    both now see the same version. ``catalog_version_reread`` forgets it: the agent loop reads
    it again before each further model call, so an edit between two calls shows at once."""
    previous = getattr(_turn, "memo", None)
    _turn.memo = [None]
    try:
        yield
    finally:
        _turn.memo = previous


def catalog_version_reread() -> None:
    memo = getattr(_turn, "memo", None)
    if memo is not None:
        memo[0] = None


def package_revisions(*, package: Package) -> QuerySet[PackageRevision]:
    return package.revisions.select_related("author").order_by("-number")


def package_revision_get(*, package: Package, number: int) -> PackageRevision | None:
    return package.revisions.select_related("author").filter(number=number).first()
