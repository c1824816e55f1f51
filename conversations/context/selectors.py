"""Reads of the UI context engine; tenant visibility lives here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import QuerySet

from common.exceptions import NotFoundError
from common.identifiers import semantic_id_parents

from .models import AccessibleEntity, ContextSnapshot, SemanticElement
from .resolver import SemanticInfo


class AccessibleEntityNotFoundError(NotFoundError):
    code = "ACCESSIBLE_ENTITY_NOT_FOUND"
    message = "Accessible entity not found."


def context_snapshot_of_session(*, session, snapshot_id: int) -> ContextSnapshot | None:
    """A snapshot of *this* session (another session's or tenant's base is unknown)."""
    return ContextSnapshot.objects.filter(session=session, tenant_id=session.tenant_id, pk=snapshot_id).first()


def accessible_entity_list(*, tenant, entity_type: str | None = None) -> QuerySet[AccessibleEntity]:
    qs = AccessibleEntity.objects.filter(tenant=tenant)
    return qs.filter(entity_type=entity_type) if entity_type else qs


def accessible_entity_get(*, tenant, entity_pk: int) -> AccessibleEntity:
    entity = AccessibleEntity.objects.filter(tenant=tenant, pk=entity_pk).first()
    if entity is None:
        raise AccessibleEntityNotFoundError(details={"id": entity_pk})
    return entity


def _context_ids(context: Mapping[str, Any]) -> set[str]:
    ids: set[str] = set()
    focus = context.get("focus") or {}
    if focus.get("semanticId"):
        ids.add(focus["semanticId"])
        ids.update(focus.get("parentIds") or ())
    for element in context.get("elements") or ():
        ids.add(element["semanticId"])
    viewport = context.get("viewport") or {}
    ids.update(viewport.get("visibleSemanticIds") or ())
    for key in ("topVisibleElement", "bottomVisibleElement"):
        if viewport.get(key):
            ids.add(viewport[key])
    page = context.get("page") or {}
    if page.get("semanticId"):
        ids.add(page["semanticId"])
    return ids


def _with_parents(ids: Iterable[str]) -> set[str]:
    out = set(ids)
    for sid in list(out):
        out.update(semantic_id_parents(sid))
    return out


def semantic_registry_for(
    *, context: Mapping[str, Any], max_rounds: int = 3
) -> tuple[dict[str, SemanticInfo], dict[str, list[str]]]:
    """Registry entries for every id the context mentions and their ancestors.

    Returns (id → SemanticInfo, id → linked package ids). One query when no
    declared parent points outside the dotted chains, a few more otherwise.
    """
    wanted = _with_parents(_context_ids(context))
    registry: dict[str, SemanticInfo] = {}
    links: dict[str, list[str]] = {}
    queried: set[str] = set()
    for _ in range(max_rounds):
        batch = wanted - queried
        if not batch:
            break
        queried |= batch
        rows = SemanticElement.objects.filter(semantic_id__in=batch).values_list(
            "semantic_id", "label", "parent", "type", "package_ids"
        )
        declared: set[str] = set()
        for sid, label, parent, type_, package_ids in rows:
            registry[sid] = SemanticInfo(label=label, parent=parent or None, type=type_)
            links[sid] = list(package_ids or [])
            if parent:
                declared.add(parent)
        wanted = _with_parents(declared) | wanted
    return registry, links
