"""Ratings of agent replies (thumbs up/down), and the learned strategy policy they feed."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction

from conversations.exceptions import MessageNotFoundError, MessageNotRatableError
from conversations.models import Message, MessageFeedback, MessageRole
from conversations.selectors import session_get
from ontology.services.policy import policy_feedback

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FeedbackResult:
    feedback: MessageFeedback
    created: bool
    changed: bool


@transaction.atomic
def message_feedback_set(
    *, acting_user, tenant, session_id: int, message_id: int, rating: str, reason: str = ""
) -> FeedbackResult:
    """Rate a reply. Idempotent per (reply, user): the same rating again changes nothing;
    a different one replaces it, and the policy takes the previous credit back first."""
    session = session_get(tenant=tenant, session_id=session_id)
    # The reply's lock serializes its raters: two first ratings at once both found none, both
    # credited the policy and the second insert died on the unique constraint (a 500).
    message = Message.objects.select_for_update().filter(pk=message_id, session=session).first()
    if message is None:
        raise MessageNotFoundError(details={"message_id": message_id})
    if message.role != MessageRole.ASSISTANT:
        raise MessageNotRatableError(details={"message_id": message_id})
    feedback = MessageFeedback.objects.select_for_update().filter(message=message, user=acting_user).first()
    previous = feedback.rating if feedback is not None else None
    if feedback is not None and previous == rating and feedback.reason == reason:
        return FeedbackResult(feedback, created=False, changed=False)
    route_id = ((message.response or {}).get("ontology") or {}).get("route_id")
    version = None
    if previous != rating:
        version = policy_feedback(tenant=tenant, route_id=route_id, rating=rating, previous=previous)
    created = feedback is None
    if created:
        feedback = MessageFeedback(tenant=tenant, message=message, user=acting_user)
    feedback.rating, feedback.reason = rating, reason
    if version is not None:
        feedback.policy_version = version
    feedback.full_clean()
    feedback.save()
    logger.info(
        "feedback.set tenant=%s message=%s rating=%s created=%s policy_version=%s",
        tenant.pk,
        message.pk,
        rating,
        created,
        version,
    )
    return FeedbackResult(feedback, created=created, changed=True)
