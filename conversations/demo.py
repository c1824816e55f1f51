"""The demo page: a work permit screen whose chat panel talks to the live API
through contexto.js (seed PRD-002 §38). On by default in the embedded setup,
off unless DEMO_ENABLED is set in production (settings.DEMO_ENABLED)."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from accounts.selectors import tenant_for_user
from conversations.context.models import AccessibleEntity, SemanticElement
from conversations.context.services import accessible_entity_create, semantic_registry_import

# The records shown by the page (fictitious). Their ids are what the page sends
# as the selection, so they must be accessible to the caller's tenant.
WORK_PERMIT = {
    "id": "4821",
    "number": "PT-2026-004821",
    "site": "Unidade Norte — Caldeira 2",
    "issuer": "Equipe de SST (demonstração)",
    "status": "Emitida",
    "activity": "Troca do isolamento térmico da caldeira, em altura",
}
COMPONENTS = [
    {"id": "equipment-827", "kind": "scaffold", "name": "Andaime", "tag": "AND-0127", "validity": "20", "start": "2026-09-01"},
    {"id": "equipment-828", "kind": "crane", "name": "Guindaste", "tag": "GUI-0042", "validity": "15", "start": "2026-09-03"},
]  # fmt: skip
DOCUMENTS = [
    {"id": "doc-apr-4821", "name": "APR — Análise Preliminar de Risco", "status": "Assinada"},
    {"id": "doc-check-827", "name": "Checklist do andaime AND-0127", "status": "Anexado"},
    {"id": "doc-lift-828", "name": "Plano de içamento GUI-0042", "status": "Pendente"},
]
DEMO_ENTITIES = [("workPermit", WORK_PERMIT["id"])] + [("equipment", c["id"]) for c in COMPONENTS]
DEMO_REGISTRY = Path(settings.BASE_DIR) / "knowledge" / "catalog_demo" / "semantic_registry.yaml"


def demo_workspace_ensure(*, acting_user, tenant) -> None:
    """Make the demo's fictitious records usable by the visitor's tenant.

    The default context authorizer only lets a context name entities the tenant
    lists as accessible, and the resolver reads labels and package links from
    the semantic registry: grant the three records and import the registry file
    (both idempotent; a cheap check skips them once done).
    """
    granted = set(
        AccessibleEntity.objects.filter(tenant=tenant, entity_id__in=[i for _, i in DEMO_ENTITIES]).values_list(
            "entity_type", "entity_id"
        )
    )
    for entity_type, entity_id in DEMO_ENTITIES:
        if (entity_type, entity_id) not in granted:
            accessible_entity_create(
                acting_user=acting_user, tenant=tenant, entity_type=entity_type, entity_id=entity_id
            )
    if not SemanticElement.objects.filter(semantic_id="workPermit.components.equipment.validity").exists():
        semantic_registry_import(acting_user=acting_user, text=DEMO_REGISTRY.read_text(encoding="utf-8"))


def _pt_br_date(iso: str) -> str:
    year, month, day = iso.split("-")
    return f"{day}/{month}/{year}"


@login_required
@ensure_csrf_cookie
def work_permit_demo(request):
    if not settings.DEMO_ENABLED:
        raise Http404("The demo is disabled (DEMO_ENABLED).")
    tenant = tenant_for_user(request.user)
    if tenant is not None:
        demo_workspace_ensure(acting_user=request.user, tenant=tenant)
    return render(
        request,
        "demo/work_permit.html",
        {
            "tenant": tenant,
            "permit": WORK_PERMIT,
            # The table shows dates as a Brazilian user reads them; data-start keeps ISO for the input.
            "components": [{**c, "start_display": _pt_br_date(c["start"])} for c in COMPONENTS],
            "documents": DOCUMENTS,
            "demo_config": {
                "endpoint": "/api/v1",
                "csrfToken": get_token(request),
                "application": {
                    "applicationId": "sst-demo",
                    "applicationVersion": "1.0.0",
                    "environment": "development",
                },
                "permit": {"id": WORK_PERMIT["id"], "number": WORK_PERMIT["number"]},
            },
        },
        status=200 if tenant else 403,
    )
