"""Who may point the agent at what: the pluggable context authorizer.

The front end is no security authority (seed PRD-002 §32): the entities a
context names — route params and the selected record — are checked for the
caller's tenant before anything is stored or resolved. ``CONTEXT_AUTHORIZER``
names the callable; it receives every entity at once (one query) and returns
the ones the caller may *not* access::

    def authorizer(*, tenant, user, entities: list[EntityRef]) -> list[EntityRef]: ...

The default reads ``AccessibleEntity`` rows of the tenant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils.module_loading import import_string

from .errors import ContextForbidden
from .models import AccessibleEntity
from .redaction import ENTITY_PARAM as _ID_PARAM  # one rule: what is an entity is never masked


@dataclass(frozen=True)
class EntityRef:
    entity_type: str
    entity_id: str
    source: str  # where the context named it: "selection", "navigation.params.id"


def context_entities(context: Mapping[str, Any]) -> list[EntityRef]:
    """The entities a context names.

    Route params: ``<type>Id`` / ``<type>_id`` name an entity of that type; a
    bare ``id`` takes its type from the route name's first segment
    (``workPermit.details`` → ``workPermit``), else from the page's semantic id.
    Other params (``tab``, ``mode``) are not entities.
    """
    refs: list[EntityRef] = []
    navigation = context.get("navigation") or {}
    page = context.get("page") or {}
    root = (navigation.get("routeName") or page.get("semanticId") or page.get("id") or "").split(".")[0]
    for name, value in (navigation.get("params") or {}).items():
        if name == "id":
            if root:
                refs.append(EntityRef(root, str(value), "navigation.params.id"))
            continue
        match = _ID_PARAM.match(name)
        if match:
            refs.append(EntityRef(match.group("type"), str(value), f"navigation.params.{name}"))
    selection = context.get("selection")
    if selection:
        refs.append(EntityRef(selection["entityType"], str(selection["entityId"]), "selection"))
    unique: dict[tuple[str, str], EntityRef] = {}
    for ref in refs:
        unique.setdefault((ref.entity_type, ref.entity_id), ref)
    return list(unique.values())


def accessible_entity_authorizer(*, tenant, user, entities: list[EntityRef]) -> list[EntityRef]:
    """Default: an entity is accessible when the tenant lists it in ``AccessibleEntity``."""
    if not entities:
        return []
    condition = Q()
    for ref in entities:
        condition |= Q(entity_type=ref.entity_type, entity_id=ref.entity_id)
    allowed = set(AccessibleEntity.objects.filter(condition, tenant=tenant).values_list("entity_type", "entity_id"))
    return [ref for ref in entities if (ref.entity_type, ref.entity_id) not in allowed]


def get_authorizer():
    return import_string(settings.CONTEXT_AUTHORIZER)


def context_authorize(*, tenant, user, context: Mapping[str, Any]) -> None:
    """Raise 403 CONTEXT_FORBIDDEN when the context names an entity the caller cannot access.

    The details name where the entity appeared, not its id: another tenant's ids
    are not echoed back.
    """
    entities = context_entities(context)
    if not entities:
        return
    denied = list(get_authorizer()(tenant=tenant, user=user, entities=entities))
    if denied:
        raise ContextForbidden(details={"fields": [ref.source for ref in denied]})
