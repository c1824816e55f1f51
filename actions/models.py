"""Capabilities (what the host application lets the agent do), actions (one proposed
change and its life) and the immutable audit trail of every step."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

CAPABILITY_ID_VALIDATOR = RegexValidator(
    r"^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z][A-Za-z0-9_-]*)+$", "A dotted id such as workPermit.equipment.updateValidity."
)


class Intent(models.TextChoices):
    UPDATE_FIELD = "UPDATE_FIELD", "Update a field"


class ExecutionMode(models.TextChoices):
    WEBHOOK = "webhook", "Webhook (the host application's URL)"
    CLIENT = "client", "Client (the front end applies it and reports back)"


class Capability(models.Model):
    """One operation the agent may carry out on behalf of a user, and under which rules."""

    capability_id = models.CharField(max_length=200, unique=True, validators=[CAPABILITY_ID_VALIDATOR])
    label = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    intent = models.CharField(max_length=32, choices=Intent.choices, default=Intent.UPDATE_FIELD)
    semantic_ids = models.JSONField(
        default=list, help_text="UI semantic ids it acts on (a parent covers its children)."
    )
    entity_type = models.CharField(
        max_length=100, blank=True, help_text="The selected record's entityType it changes (empty: any record)."
    )
    parameters_schema = models.JSONField(
        default=dict, help_text='JSON Schema of {"value", "unit"} (type, unit, range, enum, format: date).'
    )
    roles = models.JSONField(
        default=list, blank=True, help_text="Membership roles allowed (member, admin); empty: every member."
    )
    requires_confirmation = models.BooleanField(default=True)
    execution = models.CharField(max_length=16, choices=ExecutionMode.choices, default=ExecutionMode.CLIENT)
    webhook_url = models.URLField(blank=True, max_length=500)
    webhook_timeout_seconds = models.FloatField(default=5.0)
    messages = models.JSONField(
        default=dict,
        blank=True,
        help_text='The verified sentence per language, with {value}: {"pt": "A validade do equipamento foi '
        'alterada para {value}."}',
    )
    is_active = models.BooleanField("active", default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["capability_id"]
        verbose_name_plural = "capabilities"

    def __str__(self) -> str:
        return self.capability_id

    def clean(self):
        from actions.schema import schema_problems

        errors = {}
        if (
            not isinstance(self.semantic_ids, list)
            or not self.semantic_ids
            or not all(isinstance(s, str) and s for s in self.semantic_ids)
        ):
            errors["semantic_ids"] = "A non-empty list of semantic ids."
        if not isinstance(self.roles, list) or not all(isinstance(r, str) for r in self.roles):
            errors["roles"] = "A list of role names."
        problem = schema_problems(self.parameters_schema)
        if problem:
            errors["parameters_schema"] = problem
        if self.execution == ExecutionMode.WEBHOOK and not self.webhook_url:
            errors["webhook_url"] = "A webhook capability needs the host application's URL."
        if not 0.1 <= float(self.webhook_timeout_seconds or 0) <= 60:
            errors["webhook_timeout_seconds"] = "Between 0.1 and 60 seconds."
        if not isinstance(self.messages, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.messages.items()
        ):
            errors["messages"] = 'A mapping of language to sentence, e.g. {"pt": "… {value}."}.'
        if errors:
            raise ValidationError(errors)


class ActionStatus(models.TextChoices):
    PROPOSED = "proposed", "Proposed"
    NEEDS_CONFIRMATION = "needs_confirmation", "Needs confirmation"
    DENIED = "denied", "Denied"
    CONFIRMED = "confirmed", "Confirmed (the client applies it)"
    EXECUTING = "executing", "Executing"
    EXECUTED = "executed", "Executed (not yet verified)"
    VERIFIED = "verified", "Verified"
    FAILED = "failed", "Failed"


class Action(models.Model):
    """One change the user asked for, from proposal to verification.

    The primary key is uuid5 of the intent (tenant, message, capability, record,
    target, parameters): the same confirmed intent is the same row, executes once,
    and is the idempotency key the host application receives.
    """

    # Allowed transitions; anything else is a domain error.
    TRANSITIONS: dict[str, frozenset[str]] = {
        ActionStatus.PROPOSED: frozenset(
            {ActionStatus.NEEDS_CONFIRMATION, ActionStatus.DENIED, ActionStatus.CONFIRMED}
        ),
        ActionStatus.NEEDS_CONFIRMATION: frozenset({ActionStatus.CONFIRMED, ActionStatus.DENIED}),
        ActionStatus.CONFIRMED: frozenset({ActionStatus.EXECUTING, ActionStatus.VERIFIED, ActionStatus.FAILED}),
        ActionStatus.EXECUTING: frozenset({ActionStatus.EXECUTED, ActionStatus.VERIFIED, ActionStatus.FAILED}),
        ActionStatus.EXECUTED: frozenset({ActionStatus.VERIFIED, ActionStatus.FAILED}),
        ActionStatus.FAILED: frozenset({ActionStatus.EXECUTING}),  # an operator's retry (webhook)
        ActionStatus.DENIED: frozenset(),
        ActionStatus.VERIFIED: frozenset(),
    }

    id = models.UUIDField(primary_key=True, editable=False)
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="actions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    session = models.ForeignKey(
        "conversations.Session", null=True, blank=True, on_delete=models.SET_NULL, related_name="actions"
    )
    message_id = models.BigIntegerField(null=True, blank=True, help_text="The inbound message that asked for it.")
    capability = models.ForeignKey(Capability, null=True, blank=True, on_delete=models.PROTECT, related_name="actions")
    intent = models.CharField(max_length=32)
    target = models.CharField(max_length=200, help_text="The semantic id of the field.")
    target_label = models.CharField(max_length=200, blank=True)
    entity_type = models.CharField(max_length=100, blank=True)
    entity_id = models.CharField(max_length=200, blank=True)
    entity_name = models.CharField(max_length=200, blank=True)
    parameters = models.JSONField(default=dict, help_text='{"value", "unit"} as resolved from the message.')
    language = models.CharField(max_length=8, default="pt")
    status = models.CharField(max_length=24, choices=ActionStatus.choices, default=ActionStatus.PROPOSED)
    reason = models.CharField(max_length=64, blank=True, help_text="Why it was denied or failed (a stable code).")
    preview = models.JSONField(null=True, blank=True, help_text="What would change (shown before confirming).")
    confirmation_token_hash = models.CharField(max_length=64, blank=True)
    preview_expires_at = models.DateTimeField(null=True, blank=True)
    context_sha256 = models.CharField(max_length=64, blank=True)
    utterance_hash = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    outcome = models.JSONField(
        default=dict, blank=True, help_text="Execution and verification facts: status code, observed value, timings."
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    executed_at = models.DateTimeField(null=True, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["tenant", "-created_at"]), models.Index(fields=["status", "-created_at"])]
        permissions = [("retry_action", "Can retry a failed webhook execution")]

    def __str__(self) -> str:
        return f"action {self.pk} ({self.status})"

    def can_transition_to(self, status: str) -> bool:
        return status in self.TRANSITIONS.get(self.status, frozenset())


class AuditStep(models.TextChoices):
    PROPOSED = "proposed", "Proposed"
    PREVIEWED = "previewed", "Previewed"
    CONFIRMED = "confirmed", "Confirmed"
    DENIED = "denied", "Denied"
    EXECUTED = "executed", "Executed"
    VERIFIED = "verified", "Verified"
    FAILED = "failed", "Failed"


class ImmutableQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ValidationError("Audit rows are immutable.")

    def delete(self):
        raise ValidationError("Audit rows are immutable.")


class ActionAudit(models.Model):
    """One step of one action, written once and never changed.

    Hashes only: the utterance, the parameters, the record and the context are
    kept as keyed or content hashes, so the trail proves what was decided
    without holding what the user typed or looked at.
    """

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.PROTECT, related_name="+")
    action_id = models.UUIDField(db_index=True)
    step = models.CharField(max_length=16, choices=AuditStep.choices)
    reason = models.CharField(max_length=64, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    actor_role = models.CharField(max_length=32, blank=True)
    capability_id = models.CharField(max_length=200, blank=True)
    parameters_hash = models.CharField(max_length=64, blank=True)
    entity_hash = models.CharField(max_length=64, blank=True)
    context_hash = models.CharField(max_length=64, blank=True)
    utterance_hash = models.CharField(max_length=64, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ImmutableQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["tenant", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.step} {self.action_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValidationError("Audit rows are immutable.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Audit rows are immutable.")
