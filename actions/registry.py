"""The capability registry: import from YAML/JSON (all or nothing) and the planner's lookup."""

from __future__ import annotations

import logging
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db import transaction

from actions.exceptions import CapabilityFileError
from actions.models import Capability

logger = logging.getLogger("actions.registry")

FILE_KEYS = {
    "id": "capability_id",
    "label": "label",
    "description": "description",
    "intent": "intent",
    "semantic_ids": "semantic_ids",
    "semanticIds": "semantic_ids",
    "entity_type": "entity_type",
    "entityType": "entity_type",
    "parameters": "parameters_schema",
    "parameters_schema": "parameters_schema",
    "roles": "roles",
    "requires_confirmation": "requires_confirmation",
    "requiresConfirmation": "requires_confirmation",
    "execution": "execution",
    "webhook_url": "webhook_url",
    "webhookUrl": "webhook_url",
    "webhook_timeout_seconds": "webhook_timeout_seconds",
    "timeout": "webhook_timeout_seconds",
    "messages": "messages",
    "active": "is_active",
}


def _rows(data: Any) -> list[dict[str, Any]]:
    rows = data.get("capabilities") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise CapabilityFileError("Expected a list of capabilities (or {capabilities: [...]}).")
    out = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise CapabilityFileError(f"Capability {index}: not a mapping.")
        unknown = sorted(set(row) - set(FILE_KEYS))
        if unknown:
            raise CapabilityFileError(f"Capability {index}: unknown keys {', '.join(unknown)}.")
        if not row.get("id") or not row.get("label"):
            raise CapabilityFileError(f"Capability {index}: 'id' and 'label' are required.")
        out.append({FILE_KEYS[key]: value for key, value in row.items()})
    return out


def capability_registry_import(*, acting_user, text: str) -> dict[str, int]:
    """Create or update capabilities from YAML or JSON text; one bad entry imports nothing."""
    try:
        data = yaml.safe_load(text)  # YAML is a superset of JSON
    except yaml.YAMLError as exc:
        raise CapabilityFileError(f"Not YAML/JSON: {exc.__class__.__name__}.") from None
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    with transaction.atomic():
        for row in _rows(data):
            capability = Capability.objects.filter(capability_id=row["capability_id"]).first()
            if capability is None:
                capability = Capability(**row)
                counts["created"] += 1
            elif all(getattr(capability, key) == value for key, value in row.items()):
                counts["unchanged"] += 1
                continue
            else:
                for key, value in row.items():
                    setattr(capability, key, value)
                counts["updated"] += 1
            try:
                capability.full_clean()
            except ValidationError as exc:
                problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
                raise CapabilityFileError(f"{row['capability_id']}: {problems}") from None
            capability.save()
    logger.info("capabilities imported %s", counts)
    return counts


def candidate_ids(target: str, parent_ids: list[str] | tuple[str, ...]) -> list[str]:
    """The target, then its parents nearest first (declared, then the dotted chain)."""
    out = [target]
    for parent in parent_ids:
        if parent and parent not in out:
            out.append(parent)
    parts = target.split(".")
    for end in range(len(parts) - 1, 0, -1):
        dotted = ".".join(parts[:end])
        if dotted not in out:
            out.append(dotted)
    return out


def capabilities_for(*, intent: str, target: str, parent_ids) -> list[Capability]:
    """The capabilities serving ``intent`` at the nearest level that has any (several: ask which)."""
    active = [c for c in Capability.objects.filter(intent=intent, is_active=True) if isinstance(c.semantic_ids, list)]
    for semantic_id in candidate_ids(target, parent_ids):
        found = [c for c in active if semantic_id in c.semantic_ids]
        if found:
            return found
    return []
