"""Numeric results sent by client systems, and the narratives written for them.

A `Result` is immutable once accepted (its facts are what the narrative is
checked against). Its explanation runs once, in a Celery task; the outcome is
kept on the result in every case, and an `Explanation` row is written
whenever the model answered (verified, rejected or no_response). When the
provider was unavailable there is nothing to keep but the outcome.
"""

import uuid

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

# Fixed namespace: Explanation.id = uuid5(namespace, "<tenant pk>:<result_id>"),
# so any worker that redelivers the task derives the same id.
EXPLANATION_NAMESPACE = uuid.UUID("9b0f6a5e-2f4c-5d1e-8a57-6c3e0d7b4a21")


def explanation_id_for(*, tenant_id: int, result_id: str) -> uuid.UUID:
    return uuid.uuid5(EXPLANATION_NAMESPACE, f"{tenant_id}:{result_id}")


class ExplanationOutcome(models.TextChoices):
    VERIFIED = "verified", "Verified"
    REJECTED = "rejected", "Rejected (a cited number has no match)"
    NO_RESPONSE = "no_response", "No response (empty reply)"
    PROVIDER_UNAVAILABLE = "provider_unavailable", "Provider unavailable"


class Result(models.Model):
    class ExplanationStatus(models.TextChoices):
        # Accepted; not known to be on the broker (the sweep re-enqueues it).
        PENDING = "pending", "Pending"
        QUEUED = "queued", "Queued"
        DONE = "done", "Done"

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="results")
    result_id = models.CharField(
        max_length=128,
        validators=[RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$", "Letters, digits and . _ : - only.")],
        help_text="The client system's id for this result, unique per tenant.",
    )
    verdict = models.CharField(max_length=500)
    # Facts as sent (decimal values kept as strings, never floats).
    totals = models.JSONField(default=dict, blank=True)
    breakdowns = models.JSONField(default=dict, blank=True)
    budget = models.DecimalField(max_digits=24, decimal_places=6, null=True, blank=True)
    target = models.DecimalField(max_digits=24, decimal_places=6, null=True, blank=True)
    period = models.CharField(
        max_length=7,
        blank=True,
        validators=[
            RegexValidator(r"^\d{4}(-(0[1-9]|1[0-2])|-Q[1-4]|-S[12])?$", "Use YYYY-MM, YYYY, YYYY-Qn or YYYY-Sn.")
        ],
    )
    rule_core = models.TextField(blank=True)
    rule_specifics = models.TextField(blank=True)
    rule_numbers = models.JSONField(default=list, blank=True)
    units = models.JSONField(default=dict, blank=True)
    # Breakdown dimensions (or totals) that identify people: never in a prompt.
    pii_keys = models.JSONField(default=list, blank=True)
    # Named integers the narrative may cite ({"lojas": 5}).
    counts = models.JSONField(default=dict, blank=True)
    # pt words naming facts and breakdown dimensions ({"budget": ["orçamento", "teto"]}), for attribution.
    labels = models.JSONField(default=dict, blank=True)
    rounding = models.CharField(
        max_length=8,
        choices=[("exact", "Exact"), ("scale", "Scale words may round")],
        default="exact",
        help_text="exact: every cited number as given; scale: '1,2 milhão' may stand for 1.234.567.",
    )
    payload_hash = models.CharField(max_length=64)

    explanation_status = models.CharField(
        max_length=16, choices=ExplanationStatus.choices, default=ExplanationStatus.PENDING, db_index=True
    )
    explanation_outcome = models.CharField(max_length=24, choices=ExplanationOutcome.choices, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    explained_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "result_id"], name="result_unique_per_tenant"),
        ]
        indexes = [models.Index(fields=["explanation_status", "updated_at"], name="result_sweep_idx")]

    def __str__(self) -> str:
        return self.result_id

    @property
    def explanation_id(self) -> uuid.UUID:
        return explanation_id_for(tenant_id=self.tenant_id, result_id=self.result_id)


class Explanation(models.Model):
    id = models.UUIDField(primary_key=True, editable=False)
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="explanations")
    result = models.OneToOneField(Result, on_delete=models.CASCADE, related_name="explanation")
    prompt = models.TextField(help_text="As sent to the model (no PII values).")
    response = models.TextField(blank=True, help_text="The model's reply as received.")
    narrative = models.TextField(blank=True)
    verified = models.BooleanField(default=False)
    outcome = models.CharField(max_length=24, choices=ExplanationOutcome.choices)
    # [{"text", "value", "kind", "start", "end"}], offsets into `narrative`;
    # unmatched ones also carry "reason" (not_in_list, wrong_kind, wrong_entity, wrong_direction, rounded, pii).
    cited_numbers = models.JSONField(default=list, blank=True)
    unmatched_numbers = models.JSONField(default=list, blank=True)
    rounding = models.CharField(max_length=8, blank=True, help_text="The rounding rule the check applied.")
    model = models.CharField(max_length=200, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    task_id = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(outcome="provider_unavailable"),
                name="explanation_row_only_when_the_model_answered",
            ),
            models.CheckConstraint(
                condition=models.Q(verified=False) | models.Q(outcome="verified"),
                name="explanation_verified_matches_outcome",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.outcome})"
