"""Execution and verification: the webhook (outside any transaction), the client's report, the operator's retry."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from actions.audit import audit_record
from actions.exceptions import (
    ActionForbiddenError,
    ActionNotAwaitingReportError,
    ActionNotFoundError,
    ActionNotRetryableError,
)
from actions.execution import webhook_call
from actions.models import Action, ActionStatus, AuditStep, ExecutionMode
from actions.phrasing import say
from actions.schema import format_value, values_match
from actions.services.common import locked_action, membership_role, ms_since, outcome_message_store, transition

logger = logging.getLogger("actions")


def _webhook_payload(action: Action) -> dict:
    return {
        "actionId": str(action.pk),
        "capability": action.capability.capability_id,
        "tenant": action.tenant.slug,
        "entity": {"type": action.entity_type, "id": action.entity_id},
        "target": action.target,
        "parameters": action.parameters,
    }


def action_execute(*, action_id, operator=None) -> Action:
    """Call the host's webhook once for a confirmed (or, by an operator, a failed) action.

    The idempotency key is the action id: a retry reaches the host with the same key.
    """
    started = time.monotonic()
    with transaction.atomic():
        action = Action.objects.select_for_update(of=("self",)).select_related("capability", "tenant").get(pk=action_id)
        if action.capability is None or action.capability.execution != ExecutionMode.WEBHOOK:
            raise ActionNotRetryableError(details={"status": action.status})
        if action.status not in (ActionStatus.CONFIRMED, ActionStatus.FAILED):
            raise ActionNotRetryableError(details={"status": action.status})
        if action.status == ActionStatus.FAILED and operator is None:
            raise ActionNotRetryableError(details={"status": action.status})
        transition(action, ActionStatus.EXECUTING)
        action.reason = ""
        action.attempts += 1
        action.save(update_fields=["status", "reason", "attempts", "updated_at"])
    capability = action.capability
    outcome = webhook_call(
        url=capability.webhook_url,
        secret=getattr(settings, "ACTIONS_WEBHOOK_SECRET", ""),
        payload=_webhook_payload(action),
        idempotency_key=str(action.pk),
        timeout=capability.webhook_timeout_seconds,
    )
    label = action.target_label or action.target
    actor = operator or action.user
    role = "operator" if operator is not None else membership_role(action.user)
    with transaction.atomic():
        action = Action.objects.select_for_update(of=("self",)).select_related("capability").get(pk=action.pk)
        facts = {
            "mode": "webhook",
            "attempt": action.attempts,
            "status_code": outcome.status_code,
            "duration_ms": outcome.duration_ms,
        }
        if not outcome.ok:
            transition(action, ActionStatus.FAILED, reason=f"webhook_{outcome.error}")
            key = "failed_timeout" if outcome.error == "timeout" else "failed_error"
            action.outcome = {**facts, "message": say(key, action.language, label=label)}
            action.save()
            audit_record(
                action=action,
                step=AuditStep.FAILED,
                actor=actor,
                actor_role=role,
                reason=action.reason,
                duration_ms=outcome.duration_ms,
            )
        else:
            action.executed_at = timezone.now()
            transition(action, ActionStatus.EXECUTED)
            audit_record(
                action=action, step=AuditStep.EXECUTED, actor=actor, actor_role=role, duration_ms=outcome.duration_ms
            )
            verify(
                action,
                observed=[outcome.value] if outcome.has_value else [None],
                facts=facts,
                actor=actor,
                role=role,
                started=started,
            )
    logger.info(
        "action executed id=%s status=%s reason=%s attempt=%s http_status=%s duration_ms=%s",
        action.pk,
        action.status,
        action.reason or "-",
        action.attempts,
        outcome.status_code or "-",
        outcome.duration_ms,
    )
    return action


def verify(action: Action, *, observed: list, facts: dict, actor, role: str, started: float, reason: str = "") -> None:
    """Done only when every observation shows the asked value; else failed, said plainly."""
    expected = action.parameters.get("value")
    unit = action.parameters.get("unit")
    label = action.target_label or action.target
    after = format_value(expected, unit, language=action.language)
    ok = not reason and all(values_match(expected, unit, seen) for seen in observed)
    if ok:
        action.status = ActionStatus.VERIFIED
        action.reason = ""
        action.verified_at = timezone.now()
        capability = action.capability
        template = (capability.messages or {}).get(action.language) or (capability.messages or {}).get("pt")
        message = (
            template.format(value=after, label=label)
            if template
            else say("verified", action.language, label=label, value=after)
        )
        action.outcome = {**facts, "verified": True, "message": message}
        action.save()
        audit_record(
            action=action, step=AuditStep.VERIFIED, actor=actor, actor_role=role, duration_ms=ms_since(started)
        )
        return
    wrong = next((seen for seen in observed if not values_match(expected, unit, seen)), None)
    shown = (
        say("unknown_value", action.language)
        if wrong is None
        else (format_value(wrong, unit, language=action.language) if isinstance(wrong, (int, float)) else str(wrong))[
            :100
        ]
    )
    action.status = ActionStatus.FAILED
    action.reason = reason or ("verification_no_value" if wrong is None else "verification_mismatch")
    action.outcome = {
        **facts,
        "verified": False,
        "message": say("failed_mismatch", action.language, label=label, observed=shown, after=after),
    }
    action.save()
    audit_record(
        action=action,
        step=AuditStep.FAILED,
        actor=actor,
        actor_role=role,
        reason=action.reason,
        duration_ms=ms_since(started),
    )


def action_report(*, acting_user, tenant, action_id, value: Any, context: dict) -> tuple[Action, int | None]:
    """The front end applied a confirmed client-mode action: verify it against its next snapshot.

    The report carries the handler's returned value and the context captured
    after the change; the context is validated, authorized and stored like a
    turn's. Done only when both show the value asked for, on the same record.
    """
    from conversations.context.services import context_prepare, context_snapshot_create
    from conversations.models import Session

    started = time.monotonic()
    role = membership_role(acting_user)
    with transaction.atomic():
        action = locked_action(tenant=tenant, action_id=action_id)
        if action.user_id != acting_user.pk:
            raise ActionForbiddenError()
        if (
            action.status != ActionStatus.CONFIRMED
            or action.capability.execution != ExecutionMode.CLIENT
            or action.session_id is None  # its conversation is gone: there is no next snapshot to verify
        ):
            raise ActionNotAwaitingReportError(details={"status": action.status})
        session = action.session
    # Validated before any write (size, schema, age, authorization): a rejected report changes nothing.
    prepared = context_prepare(tenant=tenant, user=acting_user, session=session, payload=context)
    with transaction.atomic():
        Session.objects.select_for_update(of=("self",)).get(pk=session.pk)
        action = locked_action(tenant=tenant, action_id=action_id)
        if action.status != ActionStatus.CONFIRMED:
            raise ActionNotAwaitingReportError(details={"status": action.status})
        snapshot = context_snapshot_create(session=session, prepared=prepared)
        redacted = prepared.redacted
        selection = redacted.get("selection") or {}
        focus = redacted.get("focus") or {}
        seen_in_context = focus.get("value") if focus.get("semanticId") == action.target else None
        reason = ""
        if action.entity_id and (
            selection.get("entityType") != action.entity_type or str(selection.get("entityId")) != action.entity_id
        ):
            reason = "verification_other_record"
        action.executed_at = timezone.now()
        action.attempts += 1
        transition(action, ActionStatus.EXECUTING)
        audit_record(action=action, step=AuditStep.EXECUTED, actor=acting_user, actor_role=role)
        facts = {"mode": "client", "snapshot_id": snapshot.pk}
        # An action whose record changed underneath is not done, whatever the value says.
        verify(
            action,
            observed=[value, seen_in_context],
            facts=facts,
            actor=acting_user,
            role=role,
            started=started,
            reason=reason,
        )
        if action.status == ActionStatus.FAILED and reason:
            action.outcome["message"] = say("failed_error", action.language, label=action.target_label or action.target)
            action.save(update_fields=["outcome"])
        outcome_message_store(action)
    logger.info("action reported id=%s status=%s reason=%s", action.pk, action.status, action.reason or "-")
    return action, snapshot.pk


def action_retry(*, operator, action_id) -> Action:
    """An operator retries a failed webhook execution from the admin (same idempotency key)."""
    action = Action.objects.select_related("capability").filter(pk=action_id).first()
    if action is None:
        raise ActionNotFoundError()
    if (
        action.status != ActionStatus.FAILED
        or not action.capability
        or (action.capability.execution != ExecutionMode.WEBHOOK)
        or action.confirmed_at is None
    ):
        raise ActionNotRetryableError(details={"status": action.status})
    action = action_execute(action_id=action.pk, operator=operator)
    outcome_message_store(action)
    return action
