"""The demo page: a work permit screen whose chat panel talks to the live API
through contexto.js (seed PRD-002 §38). On by default in the embedded setup,
off unless DEMO_ENABLED is set in production (settings.DEMO_ENABLED)."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from accounts.selectors import tenant_for_user

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
    {"id": "equipment-827", "kind": "scaffold", "name": "Andaime", "tag": "AND-0127", "validity": "30", "start": "2026-09-01"},
    {"id": "equipment-828", "kind": "crane", "name": "Guindaste", "tag": "GUI-0042", "validity": "15", "start": "2026-09-03"},
]  # fmt: skip
DOCUMENTS = [
    {"id": "doc-apr-4821", "name": "APR — Análise Preliminar de Risco", "status": "Assinada"},
    {"id": "doc-check-827", "name": "Checklist do andaime AND-0127", "status": "Anexado"},
    {"id": "doc-lift-828", "name": "Plano de içamento GUI-0042", "status": "Pendente"},
]
DEMO_ENTITIES = [("workPermit", WORK_PERMIT["id"])] + [("equipment", c["id"]) for c in COMPONENTS]


@login_required
@ensure_csrf_cookie
def work_permit_demo(request):
    if not settings.DEMO_ENABLED:
        raise Http404("The demo is disabled (DEMO_ENABLED).")
    tenant = tenant_for_user(request.user)
    return render(
        request,
        "demo/work_permit.html",
        {
            "tenant": tenant,
            "permit": WORK_PERMIT,
            "components": COMPONENTS,
            "documents": DOCUMENTS,
            "demo_config": {
                "endpoint": "/api/v1",
                "csrfToken": get_token(request),
                "application": {"applicationId": "sst-demo", "applicationVersion": "1.0.0", "environment": "development"},
                "permit": {"id": WORK_PERMIT["id"], "number": WORK_PERMIT["number"]},
            },
        },
        status=200 if tenant else 403,
    )
