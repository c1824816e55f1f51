"""AgentContext samples shaped like seed PRD-002 §38: a work permit, Components tab."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

VALIDITY = "workPermit.components.equipment.validity"
START_DATE = "workPermit.components.equipment.startDate"
EQUIPMENT_TYPE = "workPermit.components.equipment.type"

NOW = dt.datetime(2026, 9, 5, 12, 0, 0, tzinfo=dt.UTC)

_BASE: dict[str, Any] = {
    "application": {"applicationId": "sst", "applicationVersion": "8.14.2", "environment": "production"},
    "navigation": {
        "route": "/work-permits/4821",
        "routeName": "workPermit.details",
        "params": {"id": "4821"},
        "breadcrumbs": [{"label": "Permissões de Trabalho", "route": "/work-permits"}],
    },
    "page": {
        "id": "workPermit.details",
        "type": "details",
        "title": "Permissão de Trabalho",
        "semanticId": "workPermit",
    },
    "tabs": [
        {"id": "general", "title": "Geral", "index": 0, "active": False},
        {"id": "components", "title": "Componentes", "index": 1, "active": True},
        {"id": "documents", "title": "Documentos", "index": 2, "active": False},
    ],
    "activeTabId": "components",
    "focus": {
        "semanticId": VALIDITY,
        "type": "field",
        "label": "Validade",
        "parentIds": ["workPermit", "workPermit.components", "workPermit.components.equipment"],
        "value": "15 dias",
    },
    "selection": {"entityType": "workPermit", "entityId": "4821", "displayName": "PT-2026-004821"},
    "elements": [
        {"semanticId": "workPermit.components.equipment", "type": "component", "label": "Equipamento"},
        {"semanticId": EQUIPMENT_TYPE, "type": "field", "label": "Tipo de Equipamento"},
        {"semanticId": VALIDITY, "type": "field", "label": "Validade"},
        {"semanticId": START_DATE, "type": "field", "label": "Data de Início"},
        {"semanticId": "workPermit.documents.attachments", "type": "table", "label": "Anexos", "visibility": "hidden"},
    ],
    "viewport": {
        "visibleSemanticIds": [EQUIPMENT_TYPE, VALIDITY, START_DATE],
        "topVisibleElement": EQUIPMENT_TYPE,
        "bottomVisibleElement": START_DATE,
    },
    "user": {"locale": "pt-BR", "timezone": "America/Sao_Paulo"},
    "capturedAt": "2026-09-05T11:59:50Z",
    "contextVersion": 7,
}


def make_context(
    *, drop: tuple[str, ...] = (), captured_at: dt.datetime | None = None, **overrides: Any
) -> dict[str, Any]:
    """A fresh copy of the sample; ``overrides`` replace top-level members, ``drop`` removes them."""
    context = copy.deepcopy(_BASE)
    for key in drop:
        context.pop(key, None)
    context.update(copy.deepcopy(overrides))
    if captured_at is not None:
        context["capturedAt"] = captured_at.isoformat().replace("+00:00", "Z")
    return context


def without_focus(**overrides: Any) -> dict[str, Any]:
    return make_context(drop=("focus",), **overrides)


def minimal_context(**overrides: Any) -> dict[str, Any]:
    """The smallest valid context, captured now: a page, no entity to authorize."""
    context = {
        "application": {"applicationId": "portal"},
        "navigation": {"route": "/quotes/new"},
        "page": {"id": "quote.new", "type": "form", "title": "Novo orçamento", "semanticId": "quote"},
        "user": {},
        "capturedAt": dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z"),
        "contextVersion": 1,
    }
    context.update(overrides)
    return context
