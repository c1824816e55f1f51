"""UI-context models: the semantic-ID registry, accessible entities, snapshots.

Imported by ``conversations.models`` so Django registers them in the
``conversations`` app.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from .schema import ELEMENT_TYPES, SEMANTIC_ID_PATTERN

semantic_id_validator = RegexValidator(
    re.compile(SEMANTIC_ID_PATTERN), "A semantic id is made of dotted segments, e.g. workPermit.components.validity."
)


class SemanticElement(models.Model):
    """A registered UI semantic id: what the front end's ``data-agent-id`` means.

    Ties UI to knowledge (seed PRD-002 §33): ``package_ids`` and each package's
    own ``semantic_ids`` say which packages explain the element; ``parent``
    defaults to the dotted id (``a.b.c`` → ``a.b``) unless declared.
    """

    TYPE_CHOICES = [(t, t) for t in ELEMENT_TYPES] + [("entity", "entity")]

    semantic_id = models.CharField(max_length=200, unique=True, validators=[semantic_id_validator])
    type = models.CharField(max_length=16, choices=TYPE_CHOICES, default="field")
    label = models.CharField(max_length=200)
    parent = models.CharField(
        max_length=200,
        blank=True,
        validators=[semantic_id_validator],
        help_text="Declared parent id; empty means the dotted parent (a.b.c → a.b).",
    )
    description = models.TextField(blank=True)
    package_ids = models.JSONField(default=list, blank=True, help_text="IDs of the knowledge packages that explain it.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["semantic_id"]
        verbose_name = "semantic UI id"

    def __str__(self) -> str:
        return self.semantic_id

    @property
    def parent_id(self) -> str | None:
        if self.parent:
            return self.parent
        head, _, _ = self.semantic_id.rpartition(".")
        return head or None

    def clean(self):
        if self.parent and self.parent == self.semantic_id:
            raise ValidationError({"parent": "An element cannot be its own parent."})
        if not isinstance(self.package_ids, list) or not all(isinstance(p, str) and p for p in self.package_ids):
            raise ValidationError({"package_ids": "Must be a list of package ids."})


class AccessibleEntity(models.Model):
    """An entity (``workPermit`` 4821) the tenant's users may point the agent at.

    Read by the default context authorizer: a context whose route params or
    selection name an entity missing here is refused (403 CONTEXT_FORBIDDEN).
    """

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="accessible_entities")
    entity_type = models.CharField(max_length=100)
    entity_id = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["entity_type", "entity_id"]
        verbose_name_plural = "accessible entities"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "entity_type", "entity_id"], name="unique_accessible_entity"),
        ]

    def __str__(self) -> str:
        return f"{self.entity_type}:{self.entity_id} @ {self.tenant_id}"


class ContextSnapshot(models.Model):
    """The redacted AgentContext a message was sent with: reproducible, hashed, small."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="context_snapshots")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    session = models.ForeignKey("conversations.Session", on_delete=models.CASCADE, related_name="context_snapshots")
    version = models.PositiveIntegerField(help_text="contextVersion sent by the front end.")
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the canonical JSON of the validated context.")
    size = models.PositiveIntegerField(help_text="Bytes of canonical UTF-8 JSON.")
    captured_at = models.DateTimeField()
    base = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="Base of a delta."
    )
    context = models.JSONField(help_text="The context with personal data masked.")
    redacted_count = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["session", "-id"])]

    def __str__(self) -> str:
        return f"context snapshot {self.pk} (v{self.version})"
