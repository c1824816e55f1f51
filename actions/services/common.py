"""What every step of the chain shares: roles, transitions, the wire form, locking, the last word."""

from __future__ import annotations

import hashlib
import logging
import time
import uuid

from django.conf import settings
from django.utils import timezone

from actions.audit import audit_record
from actions.exceptions import ActionNotAwaitingConfirmationError, ActionNotFoundError
from actions.models import Action, ActionStatus, AuditStep, Capability
from actions.phrasing import say
from actions.schema import expected_form, format_value

logger = logging.getLogger("actions")


def preview_ttl_seconds() -> int:
    return int(getattr(settings, "ACTION_PREVIEW_TTL_SECONDS", 300))


def ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def membership_role(user) -> str:
    membership = getattr(user, "membership", None) if getattr(user, "is_authenticated", False) else None
    return membership.role if membership is not None else ""


def transition(action: Action, status: str, *, reason: str = "") -> None:
    if not action.can_transition_to(status):
        raise ActionNotAwaitingConfirmationError(details={"status": action.status})
    action.status = status
    if reason:
        action.reason = reason


def denial_reason(*, capability: Capability, user, tenant, entity_type: str, entity_id: str) -> str:
    """The policy, without the parameters: '' when allowed, else a stable reason code."""
    if not capability.is_active:
        return "capability_inactive"
    role = membership_role(user)
    if not role or (capability.roles and role not in capability.roles):
        return "role_not_allowed"
    if capability.entity_type and (entity_type != capability.entity_type or not entity_id):
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


def locked_action(*, tenant, action_id) -> Action:
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


def confirm_in_transaction(*, action: Action, actor, role: str, started: float) -> None:
    transition(action, ActionStatus.CONFIRMED)
    action.confirmed_at = timezone.now()
    action.confirmation_token_hash = ""  # single use
    action.save()
    audit_record(action=action, step=AuditStep.CONFIRMED, actor=actor, actor_role=role, duration_ms=ms_since(started))


def outcome_message_store(action: Action) -> None:
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


def reply_for(action: Action) -> str:
    label = action.target_label or action.target
    if action.status == ActionStatus.VERIFIED:
        return (action.outcome or {}).get("message") or ""
    if action.status == ActionStatus.FAILED:
        return (action.outcome or {}).get("message") or say("failed_error", action.language, label=label)
    if action.status == ActionStatus.DENIED:
        if action.reason == "invalid_parameters" and action.capability_id:
            return expected_form(action.capability.parameters_schema, language=action.language, label=label)
        return say(
            action.reason if action.reason != "invalid_parameters" else "no_capability", action.language, label=label
        )
    after = format_value(action.parameters.get("value"), action.parameters.get("unit"), language=action.language)
    if action.status == ActionStatus.NEEDS_CONFIRMATION and action.preview:
        entity = action.entity_name or say("this_record", action.language)
        key = "preview" if action.preview.get("before") is not None else "preview_no_before"
        return say(key, action.language, label=label, entity=entity, before=action.preview.get("before"), after=after)
    return say("applying", action.language, label=label, after=after)
