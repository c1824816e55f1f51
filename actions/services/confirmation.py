"""Confirming a preview: bound to it (token, user), single use, before it expires; the policy again."""

from __future__ import annotations

import hmac
import logging
import time

from django.db import transaction
from django.utils import timezone

from actions.audit import audit_record
from actions.exceptions import (
    ActionDeniedError,
    ActionForbiddenError,
    ActionNotAwaitingConfirmationError,
    ConfirmationInvalidError,
    PreviewExpiredError,
)
from actions.models import Action, ActionStatus, AuditStep, ExecutionMode
from actions.phrasing import TEXTS, say
from actions.services.common import (
    action_payload,
    confirm_in_transaction,
    denial_reason,
    locked_action,
    membership_role,
    ms_since,
    outcome_message_store,
    token_hash,
    transition,
)
from actions.services.running import action_execute

logger = logging.getLogger("actions")


def action_confirm(*, acting_user, tenant, action_id, token: str) -> Action:
    """Confirm a preview: bound to it (token, user), single use, before it expires.

    The policy is checked again (a role or an access may have changed since the
    preview); a webhook capability then executes, outside the transaction.
    """
    started = time.monotonic()
    role = membership_role(acting_user)
    error = None
    with transaction.atomic():
        action = locked_action(tenant=tenant, action_id=action_id)
        if action.user_id != acting_user.pk:
            audit_record(
                action=action, step=AuditStep.DENIED, actor=acting_user, actor_role=role, reason="not_requester"
            )
            error = ActionForbiddenError()
        elif action.status != ActionStatus.NEEDS_CONFIRMATION:
            raise ActionNotAwaitingConfirmationError(details={"status": action.status})
        elif not action.confirmation_token_hash or not hmac.compare_digest(
            action.confirmation_token_hash, token_hash(token or "")
        ):
            audit_record(action=action, step=AuditStep.DENIED, actor=acting_user, actor_role=role, reason="bad_token")
            error = ConfirmationInvalidError()
        elif action.preview_expires_at is None or action.preview_expires_at <= timezone.now():
            _deny(action, "preview_expired", actor=acting_user, role=role, started=started)
            error = PreviewExpiredError()
        else:
            reason = denial_reason(
                capability=action.capability,
                user=acting_user,
                tenant=tenant,
                entity_type=action.entity_type,
                entity_id=action.entity_id,
            )
            if reason:
                _deny(action, reason, actor=acting_user, role=role, started=started)
                error = ActionDeniedError(details={"reason": reason, "action": action_payload(action)})
            else:
                confirm_in_transaction(action=action, actor=acting_user, role=role, started=started)
    # Raised after the commit: a denial is recorded even though the request fails.
    if error is not None:
        raise error
    logger.info("action confirmed id=%s capability=%s", action.pk, action.capability_id)
    if action.capability.execution == ExecutionMode.WEBHOOK:
        action = action_execute(action_id=action.pk)
        outcome_message_store(action)
    return action


def _deny(action: Action, reason: str, *, actor, role: str, started: float) -> None:
    transition(action, ActionStatus.DENIED, reason=reason)
    action.confirmation_token_hash = ""
    action.outcome = {
        **(action.outcome or {}),
        "message": say(
            reason if reason in TEXTS else "capability_inactive",
            action.language,
            label=action.target_label or action.target,
        ),
    }
    action.save()
    audit_record(
        action=action, step=AuditStep.DENIED, actor=actor, actor_role=role, reason=reason, duration_ms=ms_since(started)
    )
