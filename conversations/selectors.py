from django.db import connection
from django.db.models import QuerySet

from conversations.exceptions import SessionNotFoundError
from conversations.models import Message, MessageStatus, Session


def session_get(*, tenant, session_id) -> Session:
    """A session of ``tenant``; any other tenant's session is simply not found."""
    session = Session.objects.select_related("agent").filter(tenant=tenant, pk=session_id).first()
    if session is None:
        raise SessionNotFoundError(details={"session_id": str(session_id)})
    session.tenant = tenant  # the filter made it so: reading session.tenant later costs no query
    return session


def session_messages(*, session: Session) -> QuerySet[Message]:
    return session.messages.select_related("handoff").order_by("created_at", "id")


# Every turn reads it: written once instead of compiled by the ORM on each call.
_HISTORY_SQL = (
    'SELECT "{t}"."role", "{t}"."text" FROM "{t}" WHERE "{t}"."session_id" = %s AND "{t}"."id" < %s'
    ' AND NOT ("{t}"."status" = %s) ORDER BY "{t}"."id" DESC LIMIT %s'
).format(t=Message._meta.db_table)


def session_history(*, session: Session, before: Message, limit: int) -> list[tuple[str, str]]:
    """The last ``limit`` finished messages before ``before``, oldest first, as (role, text)."""
    with connection.cursor() as cursor:
        cursor.execute(_HISTORY_SQL, [session.pk, before.id, MessageStatus.RECEIVED, limit])
        rows = cursor.fetchall()
    return [(role, text) for role, text in reversed(rows)]
