"""Writes and the turn-facing steps of the UI context engine.

The turn (``conversations.services.turns``) calls, in order:

1. :func:`context_prepare` before any write: whole context or
   ``{baseSnapshotId, delta}``; size, schema, age, authorization; redaction.
   Every rejection raises a ``ContextError`` and leaves no row.
2. :func:`context_snapshot_create` inside the open-turn transaction, with the
   session row locked: the version check against the session's last snapshot,
   then the snapshot row.
3. :func:`context_resolve`: references, clarification, rewrite, intent,
   record change and the minimized prompt block.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import selectors
from .authorization import context_authorize
from .errors import ContextValidationError, StaleContextVersion, UnknownBaseContext
from .merge_patch import apply_merge_patch
from .models import AccessibleEntity, ContextSnapshot, SemanticElement
from .prompt import build_prompt_context, semantic_context
from .redaction import DEFAULT_SENSITIVE_KEYS, redact_context
from .resolver import Resolution, resolve
from .validation import ValidatedContext, check_delta_payload, is_delta_payload, validate_context

logger = logging.getLogger("conversations.context")


def sensitive_keys() -> tuple[str, ...]:
    return DEFAULT_SENSITIVE_KEYS + tuple(getattr(settings, "CONTEXT_SENSITIVE_KEYS", ()))


# --- the turn ------------------------------------------------------------------------


@dataclass
class PreparedContext:
    """A validated, authorized, redacted context, not yet stored."""

    validated: ValidatedContext
    redacted: dict[str, Any]
    redacted_paths: list[str]
    user: Any = None
    base_snapshot_id: int | None = None
    snapshot_id: int | None = None
    previous_selection: dict[str, Any] | None = None  # of the session's previous snapshot
    previous_snapshot_id: int | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return self.validated.version


def _base_snapshot_id(raw: Any) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.isdigit() and len(raw) <= 18:
        return int(raw)
    raise ContextValidationError([{"field": "baseSnapshotId", "message": "must be a snapshot id"}])


def context_prepare(
    *, tenant, user, session, payload: dict[str, Any], now: dt.datetime | None = None
) -> PreparedContext:
    """Validate (whole or delta), authorize and redact; no database writes."""
    now = now or timezone.now()
    max_bytes = settings.CONTEXT_MAX_BYTES
    base_id = None
    if is_delta_payload(payload):
        raw_base, delta = check_delta_payload(payload, max_bytes=max_bytes)
        base_id = _base_snapshot_id(raw_base)
        base = selectors.context_snapshot_of_session(session=session, snapshot_id=base_id)
        if base is None:
            raise UnknownBaseContext(details={"baseSnapshotId": raw_base})
        context = apply_merge_patch(base.context, delta)
    else:
        context = payload
    validated = validate_context(
        context,
        now=now,
        max_bytes=max_bytes,
        ttl_seconds=settings.CONTEXT_TTL_SECONDS,
        max_future_skew_seconds=settings.CONTEXT_MAX_FUTURE_SKEW_SECONDS,
    )
    context_authorize(tenant=tenant, user=user, context=context)
    redacted, paths = redact_context(context, sensitive_keys())
    return PreparedContext(
        validated=validated, redacted=redacted, redacted_paths=paths, user=user, base_snapshot_id=base_id
    )


def context_snapshot_create(*, session, prepared: PreparedContext) -> ContextSnapshot:
    """Store the snapshot; the caller holds the session row lock (versions are per session)."""
    last = ContextSnapshot.objects.filter(session=session).order_by("-id").only("id", "version", "context").first()
    if last is not None and prepared.version < last.version:
        raise StaleContextVersion(
            f"contextVersion {prepared.version} is older than this session's last ({last.version}).",
            details={"contextVersion": prepared.version, "lastContextVersion": last.version},
        )
    snapshot = ContextSnapshot(
        tenant_id=session.tenant_id,
        user=prepared.user if getattr(prepared.user, "is_authenticated", False) else None,
        session=session,
        version=prepared.version,
        sha256=prepared.validated.sha256,
        size=prepared.validated.size,
        captured_at=prepared.validated.captured_at,
        base_id=prepared.base_snapshot_id,
        context=prepared.redacted,
        redacted_count=min(len(prepared.redacted_paths), 32767),
    )
    # The related rows were just read (the session is locked, the base was looked up in
    # it): re-checking each foreign key would cost three queries on every turn.
    snapshot.full_clean(exclude=["tenant", "user", "session", "base"])
    snapshot.save()
    prepared.snapshot_id = snapshot.pk
    prepared.previous_snapshot_id = last.pk if last else None
    prepared.previous_selection = (last.context or {}).get("selection") if last else None
    logger.info(
        "context snapshot stored session=%s snapshot=%s version=%s size=%s redacted=%s delta=%s",
        session.pk,
        snapshot.pk,
        snapshot.version,
        snapshot.size,
        snapshot.redacted_count,
        prepared.base_snapshot_id is not None,
    )
    return snapshot


@dataclass(frozen=True)
class ContextTurn:
    """What the context contributes to one turn."""

    resolution: Resolution
    prompt_context: str
    semantic_context: dict[str, Any]
    linked_packages: tuple[str, ...]
    # the registry's links of the focus, its parents and the page, by semantic id
    package_links: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def response_fields(self) -> dict[str, Any]:
        resolution = self.resolution
        return {
            "intent": resolution.intent,
            "recordChange": resolution.record_change.to_dict() if resolution.record_change else None,
            "clarification": resolution.clarification.to_dict() if resolution.clarification else None,
            "resolution": {
                "target": resolution.target.to_dict() if resolution.target else None,
                "references": [r.to_dict() for r in resolution.references],
                "language": resolution.language,
                "rewrittenMessage": resolution.rewritten_message,
            },
        }


def context_resolve(*, prepared: PreparedContext, text: str) -> ContextTurn:
    """References → target/clarification, rewrite, intent, record change, prompt block."""
    registry, links = selectors.semantic_registry_for(context=prepared.redacted)
    resolution = resolve(
        text,
        prepared.redacted,
        registry=registry,
        previous_selection=prepared.previous_selection,
        default_language=(getattr(settings, "LANGUAGE_CODE", "pt") or "pt")[:2],
    )
    sem = semantic_context(prepared.redacted, resolution, registry=registry)
    linked: list[str] = []
    package_links: dict[str, tuple[str, ...]] = {}
    for sid in [sem["focus"], *sem["parent_ids"], sem["page"]]:
        if sid and links.get(sid):
            package_links[sid] = tuple(links[sid])
        for package_id in links.get(sid, ()) if sid else ():
            if package_id not in linked:
                linked.append(package_id)
    prompt = build_prompt_context(prepared.redacted, resolution, registry=registry)
    return ContextTurn(
        resolution=resolution,
        prompt_context=prompt,
        semantic_context=sem,
        linked_packages=tuple(linked),
        package_links=package_links,
    )


# --- accessible entities ----------------------------------------------------------------


def accessible_entity_create(*, acting_user, tenant, entity_type: str, entity_id: str) -> tuple[AccessibleEntity, bool]:
    """Idempotent: granting an entity twice returns the existing row (created=False)."""
    with transaction.atomic():
        existing = AccessibleEntity.objects.filter(tenant=tenant, entity_type=entity_type, entity_id=entity_id).first()
        if existing is not None:
            return existing, False
        entity = AccessibleEntity(tenant=tenant, entity_type=entity_type, entity_id=entity_id, created_by=acting_user)
        entity.full_clean()
        entity.save()
    logger.info("accessible entity granted tenant=%s id=%s", tenant.pk, entity.pk)
    return entity, True


def accessible_entity_delete(*, acting_user, tenant, entity_pk: int) -> None:
    with transaction.atomic():
        entity = selectors.accessible_entity_get(tenant=tenant, entity_pk=entity_pk)
        entity.delete()
    logger.info("accessible entity revoked tenant=%s id=%s", tenant.pk, entity_pk)


# --- semantic registry -------------------------------------------------------------------


class SemanticRegistryFileError(ValueError):
    pass


REGISTRY_KEYS = {"id", "semantic_id", "semanticId", "type", "label", "parent", "description", "packages", "package_ids"}


def _registry_rows(data: Any) -> list[dict[str, Any]]:
    rows = data.get("elements") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise SemanticRegistryFileError("Expected a list of elements (or {elements: [...]}).")
    out = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise SemanticRegistryFileError(f"Element {index}: not a mapping.")
        unknown = sorted(set(row) - REGISTRY_KEYS)
        if unknown:
            raise SemanticRegistryFileError(f"Element {index}: unknown keys {', '.join(unknown)}.")
        sid = row.get("id") or row.get("semantic_id") or row.get("semanticId")
        if not sid or not row.get("label"):
            raise SemanticRegistryFileError(f"Element {index}: 'id' and 'label' are required.")
        out.append(
            {
                "semantic_id": str(sid),
                "type": row.get("type") or "field",
                "label": str(row["label"]),
                "parent": row.get("parent") or "",
                "description": row.get("description") or "",
                "package_ids": list(row.get("packages") or row.get("package_ids") or []),
            }
        )
    return out


def semantic_registry_import(*, acting_user, text: str) -> dict[str, int]:
    """Create or update registry entries from YAML or JSON text (all or nothing)."""
    try:
        data = yaml.safe_load(text)  # YAML is a superset of JSON
    except yaml.YAMLError as exc:
        raise SemanticRegistryFileError(f"Not YAML/JSON: {exc.__class__.__name__}.") from None
    rows = _registry_rows(data)
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    with transaction.atomic():
        for row in rows:
            element = SemanticElement.objects.filter(semantic_id=row["semantic_id"]).first()
            if element is None:
                element = SemanticElement(**row)
                counts["created"] += 1
            else:
                changed = any(getattr(element, k) != v for k, v in row.items())
                if not changed:
                    counts["unchanged"] += 1
                    continue
                for key, value in row.items():
                    setattr(element, key, value)
                counts["updated"] += 1
            try:
                element.full_clean()
            except Exception as exc:
                raise SemanticRegistryFileError(f"{row['semantic_id']}: {exc}") from None
            element.save()
    logger.info("semantic registry imported %s", counts)
    return counts
