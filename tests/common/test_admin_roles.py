"""Roles that fit the work: every admin URL, walked as each group, answers 200 or 403 as designed.

The design is written out below (not read back from the admin or the groups), so a
permission granted to the wrong group, or an admin page that forgets to check one,
fails here.
"""

import json
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import NoReverseMatch, reverse

from accounts.services import staff_member_ensure

V, A, C, D = "view", "add", "change", "delete"
STAFF_READ = {V}  # knowledge: any staff member reads (knowledge.admin), curators also write

KNOWLEDGE_FOR_ANY_STAFF = {
    "knowledge.package": STAFF_READ,
    "knowledge.packagerevision": STAFF_READ,
    "knowledge.catalogstate": STAFF_READ,
    "knowledge.fetchfeedback": STAFF_READ,
    "knowledge.synonymset": STAFF_READ,
    "knowledge.outofscopeset": STAFF_READ,
    "knowledge.revisionsearchterms": STAFF_READ,
}

DESIGN: dict[str, dict[str, set[str]]] = {
    "curators": {
        "knowledge.package": {V, A, C},
        "knowledge.packagerevision": {V},
        "knowledge.catalogstate": {V},
        "knowledge.fetchfeedback": {V},
        "knowledge.synonymset": {V, A, C},
        "knowledge.outofscopeset": {V, A, C},
        "knowledge.revisionsearchterms": {V, C},
        "conversations.agent": {V, C},
        "conversations.session": {V, C},
        "conversations.message": {V},
        "conversations.handoff": {V, C},
        "conversations.semanticelement": {V, A, C, D},
        "conversations.contextsnapshot": {V},
        "ontology.ontologyclass": {V, A, C, D},
        "ontology.skill": {V, A, C, D},
        "ontology.profile": {V, A, C, D},
        "ontology.chunk": {V, A, C, D},
        "ontology.metadataschema": {V, A, C, D},
        "ontology.ontologyroute": {V, D},
        "ontology.strategypolicy": {V, C, D},
    },
    "validators": {
        **KNOWLEDGE_FOR_ANY_STAFF,
        "ontology.chunk": {V, C},
        "ontology.ontologyclass": {V},
        "ontology.metadataschema": {V},
    },
    "operators": {
        **KNOWLEDGE_FOR_ANY_STAFF,
        "conversations.agent": {V},
        "conversations.session": {V, C},
        "conversations.message": {V},
        "conversations.handoff": {V, C},
        "explanations.result": {V},
        "explanations.explanation": {V},
        "django_celery_results.taskresult": {V},
        "django_celery_results.groupresult": {V},
        "mcp_server.mcpsession": {V},
        # operators also retry a failed webhook execution (an admin action on actions.action)
        "actions.capability": {V},
        "actions.action": {V},
        "actions.actionaudit": {V},
    },
    "auditors": {
        **KNOWLEDGE_FOR_ANY_STAFF,
        "explanations.result": {V},
        "explanations.explanation": {V},
        "ontology.ontologyroute": {V},
        "actions.capability": {V},
        "actions.action": {V},
        "actions.actionaudit": {V},
    },
}

# Admin pages that refuse an action whatever the permissions (evidence is not edited, or
# rows come from elsewhere): even a superuser gets 403 there.
NOBODY = {
    "knowledge.package": {D},
    "knowledge.packagerevision": {A, C, D},
    "knowledge.catalogstate": {A, C, D},
    "knowledge.fetchfeedback": {A, C, D},
    "knowledge.synonymset": {D},
    "knowledge.outofscopeset": {D},
    "knowledge.revisionsearchterms": {A, D},
    "conversations.session": {A},
    "conversations.message": {A},
    "conversations.handoff": {A},
    "conversations.contextsnapshot": {A, C},
    "explanations.result": {A, C},
    "explanations.explanation": {A, C, D},
    "ontology.ontologyroute": {A, C},
    "ontology.strategypolicy": {A},  # one per tenant, created by the first rating or admin change
    "conversations.messagefeedback": {A, C},  # users' ratings: read, never written here
    "mcp_server.mcpsession": {A, C},
    "actions.action": {A, C, D},
    "actions.actionaudit": {A, C, D},
    # django-axes records login failures itself; its admin only reads (and clears) them
    "axes.accessattempt": {A},
    "axes.accesslog": {A},
    "axes.accessfailurelog": {A},
}


@pytest.fixture
def admin_world(db, tenant, catalog, user, settings):
    """One row of (nearly) every admin model, so each object page is walked too."""
    from django_celery_results.models import GroupResult, TaskResult

    from accounts.services import api_token_create
    from conversations.context.models import AccessibleEntity, SemanticElement
    from explanations.services import result_create
    from mcp_server import services as mcp
    from ontology.models import Profile
    from ontology.services import chunk_ingest, ontology_route

    caller = mcp.McpCaller(user_id=user.pk, tenant_id=tenant.pk)
    mcp.tool_route_context(caller=caller, message="Qual o prazo do Sanger?")
    mcp.tool_fetch_package(caller=caller, id_or_alias="NO_SUCH_PACKAGE")  # a session, messages, a hand-off
    result_create(acting_user=user, tenant=tenant, result_id="r-1", verdict="ok", totals={"receita": 10})
    SemanticElement.objects.create(semantic_id="quote.pricing", label="Preço", type="field")
    AccessibleEntity.objects.create(tenant=tenant, entity_type="workPermit", entity_id="1")
    TaskResult.objects.create(task_id="t-1", status="SUCCESS")
    GroupResult.objects.create(group_id="g-1")
    record = json.loads(Path("ontology/data/chunks.jsonl").read_text(encoding="utf-8").splitlines()[0])
    chunk_ingest(acting_user=None, record=record, index=False)
    Profile.objects.create(tenant=tenant, user=user)
    ontology_route(tenant=tenant, message="Por que a soja amarelou?", skills=[], origin="api")
    from conversations.context.models import ContextSnapshot
    from conversations.models import Session

    ContextSnapshot.objects.create(
        tenant=tenant,
        session=Session.objects.first(),
        version=1,
        sha256="0" * 64,
        size=2,
        captured_at="2026-01-01T00:00:00Z",
        context={},
    )
    api_token_create(user=user, tenant=tenant)


def _member(tenant, group: str):
    return staff_member_ensure(username=f"in-{group}", tenant=tenant, groups=(group,))


def _urls(model_admin, obj) -> dict[str, str]:
    info = model_admin.opts.app_label, model_admin.opts.model_name
    urls = {"changelist": reverse("admin:%s_%s_changelist" % info), "add": reverse("admin:%s_%s_add" % info)}
    if obj is not None:
        for name in ("change", "history", "delete"):
            urls[name] = reverse(f"admin:{info[0]}_{info[1]}_{name}", args=[obj.pk])
    return urls


ACTION_OF = {"changelist": V, "change": V, "history": V, "add": A, "delete": D}


def _expected(group: str | None, label: str, page: str) -> int:
    action = ACTION_OF[page]
    if action in NOBODY.get(label, set()):
        return 403
    if group is None:  # superuser
        return 200
    granted = DESIGN[group].get(label, set())
    if page == "change":
        return 200 if granted & {V, C} else 403
    return 200 if action in granted else 403


def _walk(client, group):
    mismatches, walked = [], 0
    for model, model_admin in admin.site._registry.items():
        label = model._meta.label_lower
        obj = model._default_manager.order_by("pk").first()
        for page, url in _urls(model_admin, obj).items():
            status = client.get(url).status_code
            walked += 1
            want = _expected(group, label, page)
            if status != want:
                mismatches.append(f"{label} {page}: {status}, designed {want}")
    return walked, mismatches


@pytest.mark.parametrize("group", ["curators", "validators", "operators", "auditors"])
def test_every_admin_url_as_each_group_answers_as_designed(client, tenant, admin_world, group):
    client.force_login(_member(tenant, group))
    assert client.get(reverse("admin:index")).status_code == 200
    walked, mismatches = _walk(client, group)
    assert walked > 100
    assert mismatches == []


def test_a_superuser_sees_every_page_but_those_nobody_may_use(client, admin_world):
    root = get_user_model().objects.create_superuser("root", password="x")
    client.force_login(root)
    walked, mismatches = _walk(client, None)
    assert mismatches == []


@pytest.mark.parametrize("group", ["curators", "validators", "operators", "auditors"])
def test_custom_admin_views_check_their_permission(client, tenant, admin_world, group):
    client.force_login(_member(tenant, group))
    package_pk = admin_world_package_pk()
    pages = {
        "retrieval test": (reverse("admin:knowledge_package_retrieval_test"), 200),  # any staff reads
        "revisions": (reverse("admin:knowledge_package_revisions", args=[package_pk]), 200),
        "registry import": (
            reverse("admin:conversations_semanticelement_import"),
            200 if group == "curators" else 403,
        ),
    }
    got = {name: client.get(url).status_code for name, (url, _) in pages.items()}
    assert got == {name: want for name, (_, want) in pages.items()}
    revert = reverse("admin:knowledge_package_revision_revert", args=[package_pk, 1])
    assert client.post(revert).status_code in ((302,) if group == "curators" else (403,))


def admin_world_package_pk():
    from knowledge.models import Package

    return Package.objects.get(package_id="PRICING_RULES").pk


def test_groups_exist_after_migrate_with_their_permissions(db):
    """Created by each app's data migration (and re-granted after every migrate)."""
    groups = {g.name: g for g in Group.objects.prefetch_related("permissions__content_type")}
    assert {"curators", "validators", "operators", "auditors"} <= set(groups)

    def perms(name):
        return {f"{p.content_type.app_label}.{p.codename}" for p in groups[name].permissions.all()}

    assert "ontology.validate_critical_chunk" in perms("validators")
    assert "ontology.validate_critical_chunk" not in perms("curators")
    assert {"explanations.view_explanation", "ontology.view_ontologyroute"} <= perms("auditors")
    assert not {p for p in perms("auditors") if not p.split(".")[1].startswith("view_")}
    assert {"django_celery_results.view_taskresult", "conversations.change_handoff"} <= perms("operators")
    assert {"conversations.view_contextsnapshot", "conversations.change_semanticelement"} <= perms("curators")
    assert not Group.objects.filter(name="ontology_validators").exists()


def test_no_reverse_is_missing():
    # Every registered admin has the standard pages the walk visits.
    for model, model_admin in admin.site._registry.items():
        info = model_admin.opts.app_label, model_admin.opts.model_name
        try:
            reverse("admin:%s_%s_changelist" % info)
        except NoReverseMatch:  # pragma: no cover - a broken registration
            pytest.fail(f"{model._meta.label} has no changelist")
