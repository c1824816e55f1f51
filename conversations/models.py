"""Agents, sessions, messages and hand-offs.

A session keeps the IDs of the packages it collected (``collected_packages``),
never their text: every provider call reads the bodies fresh from the active
catalog, so a curator's edit reaches the next call.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

# The UI-context engine's models live with the engine; importing them here registers them.
from conversations.context.models import AccessibleEntity, ContextSnapshot, SemanticElement  # noqa: F401
from llm import LLMConfigError
from llm.config import PROVIDERS
from llm.runtime import agent_llm_settings


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Agent(models.Model):
    """A persona with its own system prompt; every agent shares the active catalog."""

    SETTINGS_KEYS = (
        "temperature",
        "top_p",
        "max_tokens",
        "seed",
        "base_url",
        "timeout",
        "max_retries",
        "replay_fixture",
    )

    REQUEST_OPTION_CHECKS = {
        "temperature": (lambda v: _is_number(v) and 0 <= v <= 2, "a number from 0 to 2"),
        "top_p": (lambda v: _is_number(v) and 0 < v <= 1, "a number above 0, at most 1"),
        "max_tokens": (lambda v: _is_int(v) and v > 0, "a positive integer"),
        "seed": (lambda v: _is_int(v), "an integer"),
    }

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    system_prompt = models.TextField(
        help_text="The agent's own instructions; the reply contract is added by the system."
    )
    provider = models.CharField(
        max_length=16,
        blank=True,
        choices=[("", "Default (LLM_PROVIDER)")] + [(p, p) for p in PROVIDERS],
        help_text="Overrides LLM_PROVIDER for this agent.",
    )
    model = models.CharField(max_length=200, blank=True, help_text="Overrides LLM_MODEL for this agent.")
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="Optional: temperature, top_p, max_tokens, seed, base_url, timeout, max_retries, replay_fixture.",
    )
    is_active = models.BooleanField("active", default=True)
    ontology = models.BooleanField(
        default=False,
        help_text="Route each message through the ontology (pattern, skills, CoT steps); see docs/ontology.md.",
    )
    is_default = models.BooleanField(
        "default", default=False, help_text="Serves sessions created without naming an agent."
    )
    number_policy = models.CharField(
        max_length=8,
        choices=[
            ("flag", "Flag: deliver the answer, marked unverified"),
            ("retry", "Retry: one corrective call naming the numbers, then hand off"),
            ("handoff", "Hand off to a person"),
        ],
        default="flag",
        help_text="What to do when an answer cites a number that is not in what the turn delivered.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=Q(is_default=True), name="one_default_agent"),
        ]

    def __str__(self) -> str:
        return self.slug

    def clean(self):
        if not isinstance(self.settings, dict):
            raise ValidationError({"settings": "Must be a JSON object."})
        unknown = sorted(set(self.settings) - set(self.SETTINGS_KEYS))
        if unknown:
            raise ValidationError({"settings": f"Unknown keys: {', '.join(unknown)}."})
        # Sent as-is with every call: a wrong type would make every turn hand off with an HTTP 400.
        problems = [
            f"{key} must be {expected}"
            for key, (check, expected) in self.REQUEST_OPTION_CHECKS.items()
            if key in self.settings and not check(self.settings[key])
        ]
        if problems:
            raise ValidationError({"settings": "; ".join(problems) + "."})
        try:
            agent_llm_settings(self)
        except LLMConfigError as exc:
            raise ValidationError({"provider": str(exc)}) from None


class SessionStatus(models.TextChoices):
    OPEN = "open", "Open"
    HANDED_OFF = "handed_off", "Handed off"
    CLOSED = "closed", "Closed"


class Session(models.Model):
    # Allowed status transitions; anything else is a domain error (see services).
    TRANSITIONS: dict[str, frozenset[str]] = {
        SessionStatus.OPEN: frozenset({SessionStatus.HANDED_OFF, SessionStatus.CLOSED}),
        SessionStatus.HANDED_OFF: frozenset({SessionStatus.OPEN, SessionStatus.CLOSED}),
        SessionStatus.CLOSED: frozenset(),
    }

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="sessions")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="agent_sessions"
    )
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="sessions")
    status = models.CharField(max_length=16, choices=SessionStatus.choices, default=SessionStatus.OPEN)
    collected_packages = models.JSONField(
        default=list, blank=True, help_text="IDs of packages the agent fetched (s=99), in order; never their text."
    )
    context_enrichment_count = models.PositiveIntegerField(
        default=0, help_text="s=99 fetches during the latest inbound message (reset on each one)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["tenant", "-created_at"])]

    def __str__(self) -> str:
        return f"session {self.pk}"

    def can_transition_to(self, status: str) -> bool:
        return status in self.TRANSITIONS.get(self.status, frozenset())


class MessageRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"


class MessageStatus(models.TextChoices):
    RECEIVED = "received", "Received"  # inbound, turn in progress
    PROCESSED = "processed", "Processed"  # inbound, turn finished
    ANSWERED = "answered", "Answered"
    HANDOFF = "handoff", "Hand-off"
    CLARIFICATION = "clarification", "Clarification"


class Message(models.Model):
    # Indexed with the message id (Meta.indexes), not on its own: that one index serves every
    # lookup by session (the cascade, the listing) and the turn's history read.
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages", db_index=False)
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    text = models.TextField()
    status = models.CharField(max_length=16, choices=MessageStatus.choices)
    reply_to = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="reply",
        help_text="The inbound message answered.",
    )
    # The stored AgentContext the turn ran with. SET_NULL: a snapshot is only deleted with a
    # turn that failed or was abandoned (both rows go), or with its session (cascade).
    context_snapshot = models.ForeignKey(
        "conversations.ContextSnapshot", null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    packages = models.JSONField(
        default=list, blank=True, help_text='Packages whose bodies were delivered: [{"id", "revision"}].'
    )
    catalog_version = models.PositiveBigIntegerField(null=True, blank=True)
    llm_calls = models.PositiveSmallIntegerField(default=0)
    context_enrichments = models.PositiveSmallIntegerField(default=0)
    timings_ms = models.JSONField(default=dict, blank=True)
    # Retries of a POST carrying an Idempotency-Key get the stored response back.
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    request_fingerprint = models.CharField(max_length=64, blank=True)
    response = models.JSONField(null=True, blank=True, help_text="The API response, replayed for idempotent retries.")
    # {"outcome": verified|unverified|skipped, "unmatched": [{"text", "reason"}]}: the answer's numbers
    # checked against what the turn delivered (assistant messages only).
    grounding = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # Every turn reads its session's last messages before its own, newest first
            # (conversations.selectors.session_history): a range of this index, whatever the
            # table's statistics say. With the session index alone the planner may walk the
            # primary key backwards over every session's messages when statistics are stale.
            models.Index(fields=["session", "id"], name="message_session_id_idx"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="unique_message_idempotency_key",
            ),
        ]

    def __str__(self) -> str:
        return f"message {self.pk} ({self.role})"


class HandoffReason(models.TextChoices):
    UNCERTAINTY = "uncertainty", "Uncertainty (package unknown, inactive or empty)"
    BUDGET_EXCEEDED = "budget_exceeded", "Context budget exceeded"
    ITERATION_CAP = "iteration_cap", "Iteration cap reached"
    PROVIDER_UNAVAILABLE = "provider_unavailable", "LLM provider unavailable"
    INVALID_REPLY = "invalid_reply", "Invalid agent reply"
    AGENT_REQUEST = "agent_request", "Agent asked for a human"
    GUARDIAN = "guardian", "Guardian agent (a critical ontology skill is active)"
    UNGROUNDED_NUMBER = "ungrounded_number", "The answer cited a number not in what the turn delivered"


class Handoff(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="handoffs")
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="handoff")
    reason = models.CharField(max_length=32, choices=HandoffReason.choices)
    detail = models.CharField(max_length=500, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution_note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["resolved_at", "reason"])]

    def __str__(self) -> str:
        return f"hand-off {self.pk} ({self.reason})"

    @property
    def is_resolved(self) -> bool:
        return self.resolved_at is not None


class FeedbackRating(models.TextChoices):
    UP = "up", "Thumbs up"
    DOWN = "down", "Thumbs down"


class MessageFeedback(models.Model):
    """A user's rating of one agent reply: one row per (reply, user); rating again updates it."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="message_feedback")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="message_feedback")
    rating = models.CharField(max_length=8, choices=FeedbackRating.choices)
    reason = models.CharField(max_length=500, blank=True, default="")
    policy_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="strategy policy version this rating produced (None: policy untouched)"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["message", "user"], name="uniq_feedback_per_message_user")]
        indexes = [models.Index(fields=["tenant", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.rating} on message {self.message_id}"
