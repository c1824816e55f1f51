"""Step 1: an Idempotency-Key retry gets the first response, never a second provider call."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from django.conf import settings
from django.utils import timezone

from conversations.exceptions import IdempotencyKeyReusedError, IdempotentRequestInProgressError
from conversations.models import ContextSnapshot, Message, MessageRole, MessageStatus, Session

logger = logging.getLogger("conversations.turns")


def request_fingerprint(*, text: str, context: Any) -> str:
    canonical = json.dumps({"message": text, "context": context}, sort_keys=True, ensure_ascii=False, default=str)
    # surrogatepass: a lone surrogate in the context must reach the context validator (a 400
    # naming the field), not crash here; valid text encodes exactly as plain UTF-8.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def idempotent_turn_stale_seconds() -> int:
    return int(getattr(settings, "IDEMPOTENT_TURN_STALE_SECONDS", 900))


def idempotent_response(
    *, session: Session, key: str | None, fingerprint: str, reclaim_abandoned: bool = False
) -> dict | None:
    """The stored response for a retried key; None when the key is new (or its turn was abandoned).

    A turn still unanswered after ``IDEMPOTENT_TURN_STALE_SECONDS`` died with its process
    (worker killed, deploy): its key would otherwise answer 409 forever. Under the session
    lock (``reclaim_abandoned``) the dead inbound row is removed so the retry runs afresh.
    """
    if not key:
        return None
    inbound = (
        Message.objects.filter(session=session, role=MessageRole.USER, idempotency_key=key)
        .select_related("reply")
        .first()
    )
    if inbound is None:
        return None
    if inbound.request_fingerprint != fingerprint:
        raise IdempotencyKeyReusedError(details={"idempotency_key": key})
    reply = getattr(inbound, "reply", None)
    if reply is None or reply.response is None:
        age = (timezone.now() - inbound.created_at).total_seconds()
        if reply is not None or inbound.status != MessageStatus.RECEIVED or age < idempotent_turn_stale_seconds():
            raise IdempotentRequestInProgressError(details={"idempotency_key": key})
        if reclaim_abandoned:
            abandoned_turn_discard(session=session, inbound=inbound, age=age)
        return None
    return response_with_id(reply.response, reply.pk)


def response_with_id(stored: dict, message_id: int) -> dict:
    """A turn's API response from its stored form: the reply's id first (older rows stored it too)."""
    return {"message_id": message_id, **{k: v for k, v in stored.items() if k != "message_id"}}


def abandoned_turn_discard(*, session: Session, inbound: Message, age: float) -> None:
    Message.objects.filter(pk=inbound.pk, status=MessageStatus.RECEIVED, reply__isnull=True).delete()
    if inbound.context_snapshot_id is not None:
        ContextSnapshot.objects.filter(pk=inbound.context_snapshot_id, session=session).delete()
    logger.warning("turn abandoned session=%s message=%s age_s=%d", session.pk, inbound.pk, age)
