"""The action chain: planner → policy → preview → confirm → execution → verification.

Every status change and its audit row are written in one short transaction;
the webhook call runs between two of them, never inside one. The caller's
role comes from the membership, never from the client's context.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from actions.audit import audit_record, canonical, keyed_hash
from actions.exceptions import (
    ActionDeniedError,
    ActionForbiddenError,
    ActionNotAwaitingConfirmationError,
    ActionNotAwaitingReportError,
    ActionNotFoundError,
    ActionNotRetryableError,
    ConfirmationInvalidError,
    PreviewExpiredError,
)
from actions.execution import webhook_call
from actions.models import Action, ActionStatus, AuditStep, Capability, ExecutionMode
from actions.phrasing import say
from actions.registry import capabilities_for
from actions.schema import expected_form, format_value, parameter_errors, values_match

logger = logging.getLogger("actions")

ACTION_NAMESPACE = uuid.UUID("7f1d2c52-3f0e-4c59-9a43-1f6f0a6c2d10")


def preview_ttl_seconds() -> int:
    return int(getattr(settings, "ACTION_PREVIEW_TTL_SECONDS", 300))


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def membership_role(user) -> str:
    membership = getattr(user, "membership", None) if getattr(user, "is_authenticated", False) else None
    return membership.role if membership is not None else ""


def action_id_for(*, tenant_id: int, message_id: int | None, capability_id: str, entity: tuple[str, str],
                  target: str, parameters: dict) -> uuid.UUID:  # fmt: skip
    """uuid5 of the intent: the same confirmed intent is one row and one execution."""
    name = canonical([tenant_id, message_id, capability_id, list(entity), target, parameters])
    return uuid.uuid5(ACTION_NAMESPACE, name)


def _transition(action: Action, status: str, *, reason: str = "") -> None:
    if not action.can_transition_to(status):
        raise ActionNotAwaitingConfirmationError(details={"status": action.status})
    action.status = status
    if reason:
        action.reason = reason


# --- the turn ------------------------------------------------------------------------------------


@dataclass
class TurnAction:
    """What an UPDATE_FIELD intent makes of a turn: a reply without a model call."""

    status: str  # the turn's status: answered | clarification
    reply: str
    action: dict | None
    clarification: dict | None = None


@dataclass(frozen=True)
class IntentRequest:
    tenant: Any
    user: Any
    session: Any
    message_id: int | None
    utterance: str
    intent: dict
    target_label: str
    parent_ids: tuple[str, ...]
    language: str
    context: dict  # the redacted context the turn stored
    context_sha256: str
    extra: dict = field(default_factory=dict)


def _entity_of(request: IntentRequest) -> tuple[str, str, str]:
    selection = request.context.get("selection") or {}
    return (
        str(selection.get("entityType") or ""),
        str(selection.get("entityId") or ""),
        str(selection.get("displayName") or ""),
    )


def _denial_reason(*, capability: Capability, user, tenant, entity_type: str, entity_id: str) -> str:
    """The policy, without the parameters: '' when allowed, else a stable reason code."""
    if not capability.is_active:
        return "capability_inactive"
    role = membership_role(user)
    if not role or (capability.roles and role not in capability.roles):
        return "role_not_allowed"
    if capability.entity_type:
        if entity_type != capability.entity_type or not entity_id:
            return "entity_missing"
    if entity_id:
        from conversations.context.authorization import EntityRef, get_authorizer

        denied = get_authorizer()(tenant=tenant, user=user, entities=[EntityRef(entity_type, entity_id, "selection")])
        if denied:
            return "entity_forbidden"
    return ""


def action_payload(action: Action, *, token: str | None = None) -> dict:
    """The wire form of an action (turn responses and the actions API)."""
    preview = dict(action.preview) if action.preview else None
    if preview is not None and action.status == ActionStatus.NEEDS_CONFIRMATION:
        if token:
            preview["confirmationToken"] = token
        preview["expiresAt"] = action.preview_expires_at.isoformat() if action.preview_expires_at else None
    capability = action.capability
    return {
        "id": str(action.pk),
        "capability": capability.capability_id if capability else None,
        "status": action.status,
        "reason": action.reason or None,
        "preview": preview,
        "execution": capability.execution if capability else None,
        "target": action.target,
        "parameters": action.parameters,
        "entity": {"entityType": action.entity_type, "entityId": action.entity_id} if action.entity_id else None,
        "message": (action.outcome or {}).get("message"),
    }


def turn_action_plan(request: IntentRequest) -> TurnAction:
    """Planner and policy for one UPDATE_FIELD intent; a preview, a question or a refusal."""
    started = time.monotonic()
    intent = request.intent
    target = intent["target"]
    label = request.target_label or target
    language = request.language
    parameters = {"value": intent.get("value"), "unit": intent.get("unit")}
    found = capabilities_for(intent=intent["intent"], target=target, parent_ids=request.parent_ids)
    if len(found) > 1:
        options = [{"capabilityId": c.capability_id, "label": c.label} for c in found]
        question = say("several_capabilities", language, label=label, choices=" / ".join(c.label for c in found))
        return TurnAction(
            status="clarification",
            reply=question,
            action=None,
            clarification={"reason": "several_capabilities", "question": question, "options": options},
        )
    capability = found[0] if found else None
    entity_type, entity_id, entity_name = _entity_of(request)
    action_id = action_id_for(
        tenant_id=request.tenant.pk,
        message_id=request.message_id,
        capability_id=capability.capability_id if capability else "",
        entity=(entity_type, entity_id),
        target=target,
        parameters=parameters,
    )
    role = membership_role(request.user)
    action = Action(
        id=action_id,
        tenant=request.tenant,
        user=request.user if getattr(request.user, "is_authenticated", False) else None,
        session=request.session,
        message_id=request.message_id,
        capability=capability,
        intent=intent["intent"],
        target=target,
        target_label=label[:200],
        entity_type=entity_type[:100],
        entity_id=entity_id[:200],
        entity_name=entity_name[:200],
        parameters=parameters,
        language=language,
        context_sha256=request.context_sha256,
        utterance_hash=keyed_hash(request.utterance),
    )
    reply, status, token, clarification = "", "answered", None, None
    if capability is None:
        reason = "no_capability"
    else:
        reason = _denial_reason(
            capability=capability, user=request.user, tenant=request.tenant, entity_type=entity_type,
            entity_id=entity_id,
        )  # fmt: skip
    if not reason and capability is not None:
        problems = parameter_errors(capability.parameters_schema, parameters)
        if problems:
            reason = "invalid_parameters"
            status = "clarification"
            reply = expected_form(capability.parameters_schema, language=language, label=label)
            clarification = {"reason": "invalid_parameters", "question": reply, "options": [], "errors": problems}
    with transaction.atomic():
        existing = Action.objects.select_for_update().filter(pk=action_id).first()
        if existing is not None:  # the same intent again (a retried turn): one row, one trail
            return TurnAction(status=status, reply=_reply_for(existing), action=action_payload(existing))
        action.full_clean(exclude=["tenant", "user", "session", "capability"])
        action.save(force_insert=True)
        audit_record(action=action, step=AuditStep.PROPOSED, actor=request.user, actor_role=role)
        if reason:
            _transition(action, ActionStatus.DENIED, reason=reason)
            action.save(update_fields=["status", "reason", "updated_at"])
            audit_record(
                action=action, step=AuditStep.DENIED, actor=request.user, actor_role=role, reason=reason,
                duration_ms=_ms_since(started),
            )  # fmt: skip
            if not reply:
                reply = say(reason, language, label=label)
        elif capability.requires_confirmation:
            token = secrets.token_urlsafe(24)
            before = (request.context.get("focus") or {}).get("value")
            after = format_value(parameters["value"], parameters["unit"], language=language)
            entity = entity_name or say("this_record", language)
            action.preview = {
                "target": target,
                "label": label,
                "entity": {"entityType": entity_type, "entityId": entity_id, "displayName": entity_name} if entity_id else None,
                "before": before if isinstance(before, (str, int, float)) and not isinstance(before, bool) else None,
                "after": after,
                "value": parameters["value"],
                "unit": parameters["unit"],
            }  # fmt: skip
            action.confirmation_token_hash = _token_hash(token)
            action.preview_expires_at = timezone.now() + dt.timedelta(seconds=preview_ttl_seconds())
            _transition(action, ActionStatus.NEEDS_CONFIRMATION)
            action.save()
            audit_record(
                action=action, step=AuditStep.PREVIEWED, actor=request.user, actor_role=role,
                duration_ms=_ms_since(started),
            )  # fmt: skip
            key = "preview" if action.preview["before"] is not None else "preview_no_before"
            reply = say(key, language, label=label, entity=entity, before=action.preview["before"], after=after)
        else:
            # No confirmation asked: the turn itself is the confirmation.
            _confirm_in_transaction(action=action, actor=request.user, role=role, started=started)
    logger.info(
        "action planned id=%s capability=%s status=%s reason=%s duration_ms=%s",
        action.pk, action.capability_id or "-", action.status, action.reason or "-", _ms_since(started),
    )  # fmt: skip
    if action.status == ActionStatus.CONFIRMED:
        if capability.execution == ExecutionMode.WEBHOOK:
            action = action_execute(action_id=action.pk)
        reply = _reply_for(action)
    return TurnAction(status=status, reply=reply, action=action_payload(action, token=token), clarification=clarification)


def _reply_for(action: Action) -> str:
    label = action.target_label or action.target
    if action.status == ActionStatus.VERIFIED:
        return (action.outcome or {}).get("message") or ""
    if action.status == ActionStatus.FAILED:
        return (action.outcome or {}).get("message") or say("failed_error", action.language, label=label)
    if action.status == ActionStatus.DENIED:
        if action.reason == "invalid_parameters" and action.capability_id:
            return expected_form(action.capability.parameters_schema, language=action.language, label=label)
        return say(action.reason if action.reason != "invalid_parameters" else "no_capability", action.language, label=label)
    after = format_value(action.parameters.get("value"), action.parameters.get("unit"), language=action.language)
    if action.status == ActionStatus.NEEDS_CONFIRMATION and action.preview:
        entity = action.entity_name or say("this_record", action.language)
        key = "preview" if action.preview.get("before") is not None else "preview_no_before"
        return say(key, action.language, label=label, entity=entity, before=action.preview.get("before"), after=after)
    return say("applying", action.language, label=label, after=after)


def _confirm_in_transaction(*, action: Action, actor, role: str, started: float) -> None:
    _transition(action, ActionStatus.CONFIRMED)
    action.confirmed_at = timezone.now()
    action.confirmation_token_hash = ""  # single use
    action.save()
    audit_record(action=action, step=AuditStep.CONFIRMED, actor=actor, actor_role=role, duration_ms=_ms_since(started))


# --- confirm -------------------------------------------------------------------------------------


def _locked_action(*, tenant, action_id) -> Action:
    try:
        action_uuid = uuid.UUID(str(action_id))
    except ValueError:
        raise ActionNotFoundError() from None
    action = (
        Action.objects.select_for_update(of=("self",))
        .select_related("capability")
        .filter(tenant=tenant, pk=action_uuid)
        .first()
    )
    if action is None:  # another tenant's action is not found, and leaves no trace in anyone's trail
        raise ActionNotFoundError()
    return action


def action_confirm(*, acting_user, tenant, action_id, token: str) -> Action:
    """Confirm a preview: bound to it (token, user), single use, before it expires.

    The policy is checked again (a role or an access may have changed since the
    preview); a webhook capability then executes, outside the transaction.
    """
    started = time.monotonic()
    role = membership_role(acting_user)
    error = None
    with transaction.atomic():
        action = _locked_action(tenant=tenant, action_id=action_id)
        if action.user_id != acting_user.pk:
            audit_record(action=action, step=AuditStep.DENIED, actor=acting_user, actor_role=role, reason="not_requester")
            error = ActionForbiddenError()
        elif action.status != ActionStatus.NEEDS_CONFIRMATION:
            raise ActionNotAwaitingConfirmationError(details={"status": action.status})
        elif not action.confirmation_token_hash or not hmac.compare_digest(
            action.confirmation_token_hash, _token_hash(token or "")
        ):
            audit_record(action=action, step=AuditStep.DENIED, actor=acting_user, actor_role=role, reason="bad_token")
            error = ConfirmationInvalidError()
        elif action.preview_expires_at is None or action.preview_expires_at <= timezone.now():
            _deny(action, "preview_expired", actor=acting_user, role=role, started=started)
            error = PreviewExpiredError()
        else:
            reason = _denial_reason(
                capability=action.capability, user=acting_user, tenant=tenant, entity_type=action.entity_type,
                entity_id=action.entity_id,
            )  # fmt: skip
            if reason:
                _deny(action, reason, actor=acting_user, role=role, started=started)
                error = ActionDeniedError(details={"reason": reason, "action": action_payload(action)})
            else:
                _confirm_in_transaction(action=action, actor=acting_user, role=role, started=started)
    # Raised after the commit: a denial is recorded even though the request fails.
    if error is not None:
        raise error
    logger.info("action confirmed id=%s capability=%s", action.pk, action.capability_id)
    if action.capability.execution == ExecutionMode.WEBHOOK:
        action = action_execute(action_id=action.pk)
        _outcome_message_store(action)
    return action


def _deny(action: Action, reason: str, *, actor, role: str, started: float) -> None:
    _transition(action, ActionStatus.DENIED, reason=reason)
    action.confirmation_token_hash = ""
    action.outcome = {**(action.outcome or {}), "message": say(
        reason if reason in ("role_not_allowed", "entity_missing", "entity_forbidden", "capability_inactive")
        else "capability_inactive", action.language, label=action.target_label or action.target)}  # fmt: skip
    action.save()
    audit_record(action=action, step=AuditStep.DENIED, actor=actor, actor_role=role, reason=reason,
                 duration_ms=_ms_since(started))  # fmt: skip


# --- execution (webhook) ---------------------------------------------------------------------------


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
        _transition(action, ActionStatus.EXECUTING)
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
    expected = action.parameters.get("value")
    unit = action.parameters.get("unit")
    after = format_value(expected, unit, language=action.language)
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
            _transition(action, ActionStatus.FAILED, reason=f"webhook_{outcome.error}")
            key = "failed_timeout" if outcome.error == "timeout" else "failed_error"
            action.outcome = {**facts, "message": say(key, action.language, label=label)}
            action.save()
            audit_record(action=action, step=AuditStep.FAILED, actor=actor, actor_role=role, reason=action.reason,
                         duration_ms=outcome.duration_ms)  # fmt: skip
        else:
            action.executed_at = timezone.now()
            _transition(action, ActionStatus.EXECUTED)
            audit_record(action=action, step=AuditStep.EXECUTED, actor=actor, actor_role=role,
                         duration_ms=outcome.duration_ms)  # fmt: skip
            _verify(action, observed=[outcome.value] if outcome.has_value else [None], facts=facts, actor=actor,
                    role=role, started=started)  # fmt: skip
    logger.info(
        "action executed id=%s status=%s reason=%s attempt=%s http_status=%s duration_ms=%s",
        action.pk, action.status, action.reason or "-", action.attempts, outcome.status_code or "-",
        outcome.duration_ms,
    )  # fmt: skip
    return action


def _verify(action: Action, *, observed: list, facts: dict, actor, role: str, started: float, reason: str = "") -> None:
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
        audit_record(action=action, step=AuditStep.VERIFIED, actor=actor, actor_role=role,
                     duration_ms=_ms_since(started))  # fmt: skip
        return
    wrong = next((seen for seen in observed if not values_match(expected, unit, seen)), None)
    shown = say("unknown_value", action.language) if wrong is None else (
        format_value(wrong, unit, language=action.language) if isinstance(wrong, (int, float)) else str(wrong)
    )[:100]  # fmt: skip
    action.status = ActionStatus.FAILED
    action.reason = reason or ("verification_no_value" if wrong is None else "verification_mismatch")
    action.outcome = {**facts, "verified": False, "message": say("failed_mismatch", action.language, label=label,
                                                                   observed=shown, after=after)}  # fmt: skip
    action.save()
    audit_record(action=action, step=AuditStep.FAILED, actor=actor, actor_role=role, reason=action.reason,
                 duration_ms=_ms_since(started))  # fmt: skip


# --- client mode: the front end applied it and reports ------------------------------------------------


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
        action = _locked_action(tenant=tenant, action_id=action_id)
        if action.user_id != acting_user.pk:
            raise ActionForbiddenError()
        if action.status != ActionStatus.CONFIRMED or action.capability.execution != ExecutionMode.CLIENT:
            raise ActionNotAwaitingReportError(details={"status": action.status})
        session = action.session
    # Validated before any write (size, schema, age, authorization): a rejected report changes nothing.
    prepared = context_prepare(tenant=tenant, user=acting_user, session=session, payload=context)
    with transaction.atomic():
        Session.objects.select_for_update(of=("self",)).get(pk=session.pk)
        action = _locked_action(tenant=tenant, action_id=action_id)
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
        _transition(action, ActionStatus.EXECUTING)
        audit_record(action=action, step=AuditStep.EXECUTED, actor=acting_user, actor_role=role)
        facts = {"mode": "client", "snapshot_id": snapshot.pk}
        # An action whose record changed underneath is not done, whatever the value says.
        _verify(action, observed=[value, seen_in_context], facts=facts, actor=acting_user, role=role,
                started=started, reason=reason)  # fmt: skip
        if action.status == ActionStatus.FAILED and reason:
            action.outcome["message"] = say("failed_error", action.language, label=action.target_label or action.target)
            action.save(update_fields=["outcome"])
        _outcome_message_store(action)
    logger.info("action reported id=%s status=%s reason=%s", action.pk, action.status, action.reason or "-")
    return action, snapshot.pk


def _outcome_message_store(action: Action) -> None:
    """The agent's last word on the action joins the conversation: the verified sentence, or
    the honest failure (never "changed" before verification)."""
    from conversations.models import Message, MessageRole, MessageStatus

    if action.session_id is None or action.status not in (ActionStatus.VERIFIED, ActionStatus.FAILED):
        return
    Message.objects.create(
        session_id=action.session_id,
        role=MessageRole.ASSISTANT,
        text=action.outcome["message"],
        status=MessageStatus.ANSWERED,
    )


# --- operators ---------------------------------------------------------------------------------------


def action_retry(*, operator, action_id) -> Action:
    """An operator retries a failed webhook execution from the admin (same idempotency key)."""
    action = Action.objects.select_related("capability").filter(pk=action_id).first()
    if action is None:
        raise ActionNotFoundError()
    if action.status != ActionStatus.FAILED or not action.capability or (
        action.capability.execution != ExecutionMode.WEBHOOK
    ) or action.confirmed_at is None:  # fmt: skip
        raise ActionNotRetryableError(details={"status": action.status})
    action = action_execute(action_id=action.pk, operator=operator)
    _outcome_message_store(action)
    return action
