import logging

from django.db import transaction
from django.utils import timezone

from conversations.models import Handoff, Session, SessionStatus
from conversations.services.sessions import session_transition

logger = logging.getLogger("conversations")


@transaction.atomic
def handoff_resolve(*, acting_user, handoff: Handoff, note: str = "") -> Handoff:
    """Mark a hand-off handled by a person.

    When it was the session's last open hand-off, a handed-off session is open
    again, so the conversation can go on with the agent. Resolving twice is a no-op.
    """
    session = Session.objects.select_for_update().get(pk=handoff.session_id)
    handoff = Handoff.objects.select_for_update().get(pk=handoff.pk)
    if handoff.resolved_at is not None:
        return handoff
    handoff.resolved_by = acting_user
    handoff.resolved_at = timezone.now()
    handoff.resolution_note = note
    handoff.full_clean()
    handoff.save(update_fields=["resolved_by", "resolved_at", "resolution_note"])
    still_open = session.handoffs.filter(resolved_at__isnull=True).exists()
    if session.status == SessionStatus.HANDED_OFF and not still_open:
        session_transition(session=session, status=SessionStatus.OPEN)
    logger.info(
        "handoff resolved handoff=%s session=%s reason=%s by=%s",
        handoff.pk,
        session.pk,
        handoff.reason,
        getattr(acting_user, "pk", None),
    )
    return handoff
