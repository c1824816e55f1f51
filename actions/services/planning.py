"""The turn's part: planner and policy turn an UPDATE_FIELD intent into a preview, a question or a refusal."""

from __future__ import annotations

import datetime as dt
import logging
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from actions.audit import audit_record, canonical, keyed_hash
from actions.models import Action, ActionStatus, AuditStep, ExecutionMode
from actions.phrasing import say
from actions.registry import capabilities_for
from actions.schema import expected_form, format_value, parameter_errors
from actions.services.common import (
    action_payload,
    confirm_in_transaction,
    denial_reason,
    membership_role,
    ms_since,
    preview_ttl_seconds,
    reply_for,
    token_hash,
    transition,
)
from actions.services.running import action_execute
from conversations.context.redaction import MASK as REDACTION_MASK

logger = logging.getLogger("actions")

ACTION_NAMESPACE = uuid.UUID("7f1d2c52-3f0e-4c59-9a43-1f6f0a6c2d10")


def action_id_for(
    *,
    tenant_id: int,
    message_id: int | None,
    capability_id: str,
    entity: tuple[str, str],
    target: str,
    parameters: dict,
) -> uuid.UUID:
    """uuid5 of the intent: the same confirmed intent is one row and one execution."""
    name = canonical([tenant_id, message_id, capability_id, list(entity), target, parameters])
    return uuid.uuid5(ACTION_NAMESPACE, name)


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


def _entity_of(request: IntentRequest) -> tuple[str, str, str]:
    selection = request.context.get("selection") or {}
    return (
        str(selection.get("entityType") or ""),
        str(selection.get("entityId") or ""),
        str(selection.get("displayName") or ""),
    )


def _shown_value(context: dict, target: str):
    """The target's value as the page showed it (the focus's opt-in value), if it is the target and not masked."""
    focus = context.get("focus") or {}
    value = focus.get("value") if focus.get("semanticId") == target else None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == REDACTION_MASK:
        return None
    return value


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
        reason = denial_reason(
            capability=capability,
            user=request.user,
            tenant=request.tenant,
            entity_type=entity_type,
            entity_id=entity_id,
        )
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
            return TurnAction(status=status, reply=reply_for(existing), action=action_payload(existing))
        action.full_clean(exclude=["tenant", "user", "session", "capability"])
        action.save(force_insert=True)
        audit_record(action=action, step=AuditStep.PROPOSED, actor=request.user, actor_role=role)
        if reason:
            transition(action, ActionStatus.DENIED, reason=reason)
            action.save(update_fields=["status", "reason", "updated_at"])
            audit_record(
                action=action,
                step=AuditStep.DENIED,
                actor=request.user,
                actor_role=role,
                reason=reason,
                duration_ms=ms_since(started),
            )
            if not reply:
                reply = say(reason, language, label=label)
        elif capability.requires_confirmation:
            token = secrets.token_urlsafe(24)
            before = _shown_value(request.context, target)
            after = format_value(parameters["value"], parameters["unit"], language=language)
            entity = entity_name or say("this_record", language)
            action.preview = {
                "target": target,
                "label": label,
                "entity": {"entityType": entity_type, "entityId": entity_id, "displayName": entity_name}
                if entity_id
                else None,
                "before": before,
                "after": after,
                "value": parameters["value"],
                "unit": parameters["unit"],
            }
            action.confirmation_token_hash = token_hash(token)
            action.preview_expires_at = timezone.now() + dt.timedelta(seconds=preview_ttl_seconds())
            transition(action, ActionStatus.NEEDS_CONFIRMATION)
            action.save()
            audit_record(
                action=action,
                step=AuditStep.PREVIEWED,
                actor=request.user,
                actor_role=role,
                duration_ms=ms_since(started),
            )
            key = "preview" if action.preview["before"] is not None else "preview_no_before"
            reply = say(key, language, label=label, entity=entity, before=action.preview["before"], after=after)
        else:
            # No confirmation asked: the turn itself is the confirmation.
            confirm_in_transaction(action=action, actor=request.user, role=role, started=started)
    logger.info(
        "action planned id=%s capability=%s status=%s reason=%s duration_ms=%s",
        action.pk,
        action.capability_id or "-",
        action.status,
        action.reason or "-",
        ms_since(started),
    )
    if action.status == ActionStatus.CONFIRMED:
        if capability.execution == ExecutionMode.WEBHOOK:
            action = action_execute(action_id=action.pk)
        reply = reply_for(action)
    return TurnAction(
        status=status, reply=reply, action=action_payload(action, token=token), clarification=clarification
    )
