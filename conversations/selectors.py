from django.db.models import QuerySet

from conversations.exceptions import SessionNotFoundError
from conversations.models import Message, Session


def session_get(*, tenant, session_id) -> Session:
    """A session of ``tenant``; any other tenant's session is simply not found."""
    session = Session.objects.select_related("agent").filter(tenant=tenant, pk=session_id).first()
    if session is None:
        raise SessionNotFoundError(details={"session_id": str(session_id)})
    session.tenant = tenant  # the filter made it so: reading session.tenant later costs no query
    return session


def session_messages(*, session: Session) -> QuerySet[Message]:
    return session.messages.select_related("handoff").order_by("created_at", "id")


def session_history(*, session: Session, before: Message, limit: int) -> list[tuple[str, str]]:
    """The last ``limit`` finished messages before ``before``, oldest first, as (role, text)."""
    rows = (
        session.messages.filter(id__lt=before.id)
        .exclude(status="received")
        .order_by("-id")
        .values_list("role", "text")[:limit]
    )
    return list(reversed(rows))
