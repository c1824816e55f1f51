"""The UI context in agent turns, through the API, with the LLM scripted over a real socket.

One test per acceptance criterion of seed PRD-002 §39 (back-end side; names
start with ``test_criterion_``), then the rejections (400/403/409/413), each
checked to leave no row behind.
"""

import datetime as dt
import json

import pytest
from django.utils import timezone

from conversations.context import canonical_json
from conversations.context.models import AccessibleEntity, ContextSnapshot, SemanticElement
from conversations.models import Message, Session
from tests.conversations.context.samples import START_DATE, VALIDITY, make_context, minimal_context
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db

REWRITE = "Explique o campo Validade do registro PT-2026-004821, na aba Componentes da Permissão de Trabalho."


def answer(text="Pronto."):
    return {"s": 0, "message": text}


def fresh(context=None, **overrides):
    """The sample context captured now (the TTL is measured against the server clock)."""
    context = context if context is not None else make_context(**overrides)
    context["capturedAt"] = timezone.now().isoformat().replace("+00:00", "Z")
    return context


@pytest.fixture
def work_permit(tenant):
    """The tenant may see work permit 4821 (route param and selection of the sample)."""
    AccessibleEntity.objects.create(tenant=tenant, entity_type="workPermit", entity_id="4821")
    AccessibleEntity.objects.create(tenant=tenant, entity_type="workPermit", entity_id="4922")


def rows(session):
    session = Session.objects.get(pk=session.pk)
    return {
        "snapshots": ContextSnapshot.objects.count(),
        "messages": Message.objects.count(),
        "session": (
            session.status,
            session.updated_at,
            list(session.collected_packages),
            session.context_enrichment_count,
        ),
    }


def assert_rejected(response, status, code, before, session, llm):
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert rows(session) == before, "a rejected request must leave no row behind"
    assert llm.requests == []


def ok(api_client, session, text, context, llm, reply="Certo."):
    llm.reply_json(answer(reply))
    response = send(api_client, session, text, context=context)
    assert response.status_code == 201, response.content
    return response.json()


# --- §39, one test per criterion ----------------------------------------------------------------


def test_criterion_page_is_registered(api_client, chat_session, scripted_llm, work_permit):
    data = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    snapshot = ContextSnapshot.objects.get(pk=data["contextSnapshotId"])
    assert snapshot.context["page"]["title"] == "Permissão de Trabalho"
    assert "Page: Permissão de Trabalho [workPermit]" in scripted_llm.requests[0].system_prompt


def test_criterion_route_is_registered(api_client, chat_session, scripted_llm, work_permit):
    data = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    snapshot = ContextSnapshot.objects.get(pk=data["contextSnapshotId"])
    assert snapshot.context["navigation"]["route"] == "/work-permits/4821"
    assert snapshot.context["navigation"]["routeName"] == "workPermit.details"


def test_criterion_active_tab_is_registered(api_client, chat_session, scripted_llm, work_permit):
    ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    assert "Tab: Componentes" in scripted_llm.requests[0].system_prompt


def test_criterion_semantic_focus_is_registered(api_client, chat_session, scripted_llm, work_permit):
    data = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    assert data["resolution"]["target"]["semanticId"] == VALIDITY
    assert f'Target: field "Validade" [{VALIDITY}]' in scripted_llm.requests[0].system_prompt


def test_criterion_selection_is_registered(api_client, chat_session, scripted_llm, work_permit):
    data = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    snapshot = ContextSnapshot.objects.get(pk=data["contextSnapshotId"])
    assert snapshot.context["selection"]["entityId"] == "4821"
    assert "Selected record: PT-2026-004821 (workPermit)" in scripted_llm.requests[0].system_prompt


def test_criterion_context_is_sent_with_the_question(api_client, chat_session, scripted_llm, work_permit):
    data = ok(api_client, chat_session, "Explique isso.", fresh(), scripted_llm)
    snapshot_id = data["contextSnapshotId"]
    assert isinstance(snapshot_id, int)
    inbound, reply = Message.objects.filter(session=chat_session).order_by("id")
    assert inbound.context_snapshot_id == snapshot_id == reply.context_snapshot_id
    listed = api_client.get(f"/api/v1/sessions/{chat_session.pk}/messages").json()["results"]
    assert [m["contextSnapshotId"] for m in listed] == [snapshot_id, snapshot_id]


def test_criterion_context_does_not_depend_on_the_dom(api_client, chat_session, scripted_llm, work_permit):
    before = rows(chat_session)
    context = fresh(dom="<div id='app'><input name='validade'></div>")
    response = send(api_client, chat_session, "Explique isso.", context=context)
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["errors"][0] == {"field": "dom", "message": "unknown field"}
    # Semantic ids, not selectors or HTML, are what the agent sees.
    ok(api_client, chat_session, "Explique isso.", fresh(), scripted_llm)
    prompt = scripted_llm.requests[0].system_prompt
    assert "<" not in prompt.split("## Where the user is", 1)[1]


def test_criterion_context_is_versioned(api_client, chat_session, scripted_llm, work_permit):
    ok(api_client, chat_session, "Explique.", fresh(contextVersion=7), scripted_llm)
    ok(api_client, chat_session, "Explique.", fresh(contextVersion=7), scripted_llm)  # unchanged screen
    ok(api_client, chat_session, "Explique.", fresh(contextVersion=9), scripted_llm)
    assert list(ContextSnapshot.objects.order_by("id").values_list("version", flat=True)) == [7, 7, 9]
    scripted_llm.requests.clear()
    before = rows(chat_session)
    response = send(api_client, chat_session, "Explique.", context=fresh(contextVersion=8))
    assert_rejected(response, 409, "STALE_CONTEXT_VERSION", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"] == {"contextVersion": 8, "lastContextVersion": 9}


def test_criterion_context_has_a_snapshot(api_client, chat_session, scripted_llm, work_permit, user, tenant):
    context = fresh()
    data = ok(api_client, chat_session, "Explique.", context, scripted_llm)
    snapshot = ContextSnapshot.objects.get(pk=data["contextSnapshotId"])
    canonical = canonical_json(context)
    import hashlib

    assert snapshot.sha256 == hashlib.sha256(canonical).hexdigest()
    assert snapshot.size == len(canonical)
    assert (snapshot.tenant, snapshot.user, snapshot.session_id, snapshot.version) == (tenant, user, chat_session.pk, 7)
    assert snapshot.captured_at == dt.datetime.fromisoformat(context["capturedAt"])


@pytest.mark.parametrize(
    ("message", "kind", "rewritten"),
    [
        ("Explique isso.", "focus", REWRITE),
        ("Resuma este registro.", "selection", "Resuma o registro PT-2026-004821."),
        ("O que posso fazer aqui?", "page", "O que posso fazer na página Permissão de Trabalho, na aba Componentes?"),
    ],
)
def test_criterion_isso_este_aqui_are_resolved(
    api_client, chat_session, scripted_llm, work_permit, message, kind, rewritten
):
    data = ok(api_client, chat_session, message, fresh(), scripted_llm)
    assert data["resolution"]["references"][0]["kind"] == kind
    assert data["resolution"]["rewrittenMessage"] == rewritten
    # The agent receives the explicit message; the stored message stays what the user typed.
    assert scripted_llm.requests[0].user_text == rewritten
    assert Message.objects.filter(session=chat_session, role="user").get().text == message


def test_criterion_context_points_at_semantic_ids(api_client, chat_session, scripted_llm, work_permit):
    SemanticElement.objects.create(semantic_id="workPermit.components.equipment", type="component", label="Equipamento")
    context = fresh()
    context.pop("elements")  # the registry names the parents now
    data = ok(api_client, chat_session, "Explique isso.", context, scripted_llm)
    assert data["resolution"]["target"]["semanticId"] == VALIDITY
    assert data["resolution"]["target"]["parentIds"] == [
        "workPermit.components.equipment",
        "workPermit.components",
        "workPermit",
    ]
    assert "Inside: Equipamento > Componentes > Permissão de Trabalho" in scripted_llm.requests[0].system_prompt


def test_criterion_semantic_ids_are_related_to_knowledge(api_client, chat_session, scripted_llm, work_permit, settings):
    from knowledge.catalog import get_active_catalog

    settings.AGENT_KNOWLEDGE_ROUTER = True  # the conversations conftest turns the knowledge set off

    SemanticElement.objects.create(
        semantic_id="workPermit.components.equipment",
        type="component",
        label="Equipamento",
        package_ids=["DELIVERY_TIMELINES"],
    )
    data = ok(api_client, chat_session, "Explique isso.", fresh(), scripted_llm)
    marker = get_active_catalog().get("DELIVERY_TIMELINES").body.strip().splitlines()[-1]
    assert "## Knowledge for this message" in scripted_llm.requests[0].system_prompt
    assert marker in scripted_llm.requests[0].system_prompt
    assert [p["id"] for p in data["packages"]] == ["DELIVERY_TIMELINES"]


def _knowledge_order(prompt):
    section = prompt.split("## Knowledge for this message", 1)[1].split("\n## ", 1)[0]
    return [line[4:].split(" — ", 1)[0] for line in section.splitlines() if line.startswith("### ")]


@pytest.mark.parametrize(
    ("focus", "first"),
    [
        ("workPermit.components.equipment.crane", "CRANE"),
        ("workPermit.components.equipment.scaffold", "SCAFFOLD"),
        (VALIDITY, "EQUIPMENT_VALIDITY"),
    ],
)
def test_criterion_focus_ranks_its_packages_first_then_its_parents_through_the_router(
    api_client, chat_session, scripted_llm, work_permit, settings, focus, first
):
    """Packages whose ``semantic_ids`` hold the focus come first, then the parents' (nearest
    first), through the real router: the rewritten message names the page and the tab, which
    alone scores the parents' packages higher."""
    from django.conf import settings as django_settings

    from knowledge.services import catalog_sync_bundled

    settings.AGENT_KNOWLEDGE_ROUTER = True
    base = django_settings.BASE_DIR / "knowledge"
    catalog_sync_bundled(directories=[base / "catalog", base / "catalog_demo"])
    context = fresh(drop=("elements", "viewport"))
    context["focus"].update(semanticId=focus, label="Item")
    data = ok(api_client, chat_session, "Explique isso.", context, scripted_llm)
    assert [p["id"] for p in data["packages"]] == [first, "WORK_PERMIT_COMPONENTS", "WORK_PERMIT_OVERVIEW"]
    assert _knowledge_order(scripted_llm.requests[0].system_prompt) == [
        first,
        "WORK_PERMIT_COMPONENTS",  # workPermit.components(.equipment): the nearest parents
        "WORK_PERMIT_OVERVIEW",  # workPermit: the root
    ]


def test_criterion_backend_validates_context_and_authorization(
    api_client, chat_session, scripted_llm, work_permit, other_tenant
):
    AccessibleEntity.objects.create(tenant=other_tenant, entity_type="workPermit", entity_id="9999")
    before = rows(chat_session)
    for tampered in (
        {"entityType": "workPermit", "entityId": "9999", "displayName": "PT de outro tenant"},  # another tenant's
        {"entityType": "workPermit", "entityId": "another-user-record"},  # unknown
    ):
        response = send(api_client, chat_session, "Explique.", context=fresh(selection=tampered))
        assert_rejected(response, 403, "CONTEXT_FORBIDDEN", before, chat_session, scripted_llm)
        assert response.json()["error"]["details"] == {"fields": ["selection"]}
        assert "9999" not in response.content.decode()
    context = fresh()
    context["navigation"]["params"] = {"id": "9999"}
    response = send(api_client, chat_session, "Explique.", context=context)
    assert_rejected(response, 403, "CONTEXT_FORBIDDEN", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"] == {"fields": ["navigation.params.id"]}


def test_criterion_sensitive_data_is_not_sent_needlessly(api_client, chat_session, scripted_llm, work_permit):
    context = fresh()
    context["selection"]["fields"] = {
        "executante": "Maria Souza",
        "cpf": "123.456.789-09",
        "telefone": "(11) 98765-4321",
        "salario": "R$ 7.500,00",
        "observacao": "falar com maria@acme.com",
    }
    data = ok(api_client, chat_session, "Qual é a validade?", context, scripted_llm)
    request = scripted_llm.requests[0]
    # The whole request body the scripted server read off the socket, not only the messages.
    sent = json.dumps(request.body, ensure_ascii=False)
    for value in ("Maria Souza", "123.456.789-09", "98765-4321", "7.500", "maria@acme.com", "[REDACTED]"):
        assert value not in sent
    assert "Current value of the target: 15 dias" in request.system_prompt  # asked about it: sent
    stored = ContextSnapshot.objects.get(pk=data["contextSnapshotId"]).context["selection"]["fields"]
    assert stored["cpf"] == stored["telefone"] == stored["salario"] == "[REDACTED]"
    assert stored["observacao"] == "falar com [REDACTED]"
    assert stored["executante"] == "Maria Souza"  # not personal data by key or pattern: kept, never prompted


def test_criterion_focused_value_is_only_sent_when_asked_about(api_client, chat_session, scripted_llm, work_permit):
    ok(api_client, chat_session, "Explique isso.", fresh(), scripted_llm)
    assert "15 dias" not in scripted_llm.requests[0].system_prompt


def test_criterion_typical_context_stays_under_5_kb(api_client, chat_session, scripted_llm, work_permit):
    data = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    assert ContextSnapshot.objects.get(pk=data["contextSnapshotId"]).size < 5120
    scripted_llm.requests.clear()
    before = rows(chat_session)
    big = fresh()
    big["page"]["metadata"] = {"dump": "x" * 5000}
    response = send(api_client, chat_session, "Explique.", context=big)
    assert_rejected(response, 413, "CONTEXT_SIZE_LIMIT_EXCEEDED", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["limit"] == 5120


def _delta(api_client, session, llm, base_id, delta, text="Explique.", reply="Certo."):
    return ok(api_client, session, text, {"baseSnapshotId": base_id, "delta": delta}, llm, reply=reply)


def _now():
    return timezone.now().isoformat().replace("+00:00", "Z")


def test_criterion_tab_change_updates_the_context(api_client, chat_session, scripted_llm, work_permit):
    first = ok(api_client, chat_session, "O que tem nesta aba?", fresh(), scripted_llm)
    tabs = make_context()["tabs"]
    for tab in tabs:
        tab["active"] = tab["id"] == "general"
    second = _delta(
        api_client,
        chat_session,
        scripted_llm,
        first["contextSnapshotId"],
        {"activeTabId": "general", "tabs": tabs, "focus": None, "contextVersion": 8, "capturedAt": _now()},
        text="O que tem nesta aba?",
    )
    assert "Tab: Componentes" in scripted_llm.requests[0].system_prompt
    assert "Tab: Geral" in scripted_llm.requests[1].system_prompt
    snapshot = ContextSnapshot.objects.get(pk=second["contextSnapshotId"])
    assert (snapshot.base_id, snapshot.version, snapshot.context["activeTabId"]) == (
        first["contextSnapshotId"],
        8,
        "general",
    )


def test_criterion_selection_change_updates_the_context(api_client, chat_session, scripted_llm, work_permit):
    first = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    delta = {
        "selection": {"entityId": "4922", "displayName": "PT-2026-004922"},
        "navigation": {"route": "/work-permits/4922", "params": {"id": "4922"}},
        "contextVersion": 8,
        "capturedAt": _now(),
    }
    second = _delta(api_client, chat_session, scripted_llm, first["contextSnapshotId"], delta)
    assert "Selected record: PT-2026-004922" in scripted_llm.requests[1].system_prompt
    assert ContextSnapshot.objects.get(pk=second["contextSnapshotId"]).context["selection"]["entityId"] == "4922"


def test_criterion_focus_change_updates_the_context(api_client, chat_session, scripted_llm, work_permit):
    first = ok(api_client, chat_session, "Explique isso.", fresh(), scripted_llm)
    delta = {
        "focus": {"semanticId": START_DATE, "label": "Data de Início", "value": None},
        "contextVersion": 8,
        "capturedAt": _now(),
    }
    second = _delta(api_client, chat_session, scripted_llm, first["contextSnapshotId"], delta, text="Explique isso.")
    assert first["resolution"]["target"]["semanticId"] == VALIDITY
    assert second["resolution"]["target"]["semanticId"] == START_DATE
    assert "Data de Início" in scripted_llm.requests[1].user_text


def test_criterion_old_context_is_not_used_after_a_record_change(api_client, chat_session, scripted_llm, work_permit):
    first = ok(api_client, chat_session, "Explique isso.", fresh(), scripted_llm)
    assert first["recordChange"] is None
    context = fresh(contextVersion=8)
    context["selection"] = {"entityType": "workPermit", "entityId": "4922", "displayName": "PT-2026-004922"}
    context["navigation"]["params"] = {"id": "4922"}
    second = ok(api_client, chat_session, "E a validade?", context, scripted_llm)
    notice = (
        "O registro selecionado mudou de PT-2026-004821 para PT-2026-004922; "
        "esta resposta considera somente PT-2026-004922."
    )
    assert second["recordChange"] == {
        "previous": {"entityType": "workPermit", "entityId": "4821"},
        "current": {"entityType": "workPermit", "entityId": "4922"},
        "notice": notice,
    }
    prompt = scripted_llm.requests[1].system_prompt
    assert notice in prompt
    assert "Selected record: PT-2026-004922" in prompt
    assert "PT-2026-004922" in scripted_llm.requests[1].user_text
    assert "PT-2026-004821" not in scripted_llm.requests[1].user_text


# --- clarification, intent ------------------------------------------------------------------------


def test_ambiguity_asks_back_with_status_clarification_and_no_llm_call(
    api_client, chat_session, scripted_llm, work_permit
):
    context = fresh(drop=("focus",))
    context["viewport"] = {"visibleSemanticIds": [VALIDITY, START_DATE]}
    response = send(api_client, chat_session, "Explique isso.", context=context)
    assert response.status_code == 201
    data = response.json()
    assert data["status"] == "clarification"
    assert data["reply"] == "Você quer que eu explique o campo Validade ou o campo Data de Início?"
    assert [o["semanticId"] for o in data["clarification"]["options"]] == [VALIDITY, START_DATE]
    assert data["contextSnapshotId"] is not None
    assert scripted_llm.requests == []
    reply = Message.objects.get(session=chat_session, role="assistant")
    assert (reply.status, reply.llm_calls) == ("clarification", 0)


def test_altere_isso_para_30_dias_returns_an_intent_proposal(api_client, chat_session, scripted_llm, work_permit):
    data = ok(api_client, chat_session, "Altere isso para 30 dias.", fresh(), scripted_llm)
    assert data["intent"] == {"intent": "UPDATE_FIELD", "target": VALIDITY, "value": 30, "unit": "days"}


def test_turn_without_context_has_null_context_fields(api_client, chat_session, scripted_llm):
    data = ok(api_client, chat_session, "Oi", None, scripted_llm)
    assert data["contextSnapshotId"] is None
    assert data["intent"] is data["recordChange"] is data["clarification"] is data["resolution"] is None
    assert "## Where the user is" not in scripted_llm.requests[0].system_prompt


# --- rejections leave no row ---------------------------------------------------------------------


def test_stale_context_age_is_409_and_leaves_no_row(api_client, chat_session, scripted_llm, work_permit):
    before = rows(chat_session)
    context = make_context(captured_at=timezone.now() - dt.timedelta(seconds=310))
    response = send(api_client, chat_session, "Explique.", context=context)
    assert_rejected(response, 409, "STALE_CONTEXT_AGE", before, chat_session, scripted_llm)


def test_context_from_the_future_is_400_and_leaves_no_row(api_client, chat_session, scripted_llm, work_permit):
    before = rows(chat_session)
    context = make_context(captured_at=timezone.now() + dt.timedelta(seconds=60))
    response = send(api_client, chat_session, "Explique.", context=context)
    assert_rejected(response, 400, "CONTEXT_TIMESTAMP_IN_FUTURE", before, chat_session, scripted_llm)


def test_ttl_is_a_setting(api_client, chat_session, scripted_llm, work_permit, settings):
    settings.CONTEXT_TTL_SECONDS = 60
    before = rows(chat_session)
    context = make_context(captured_at=timezone.now() - dt.timedelta(seconds=90))
    response = send(api_client, chat_session, "Explique.", context=context)
    assert_rejected(response, 409, "STALE_CONTEXT_AGE", before, chat_session, scripted_llm)


def test_bad_enum_and_wrong_type_are_400_naming_the_field(api_client, chat_session, scripted_llm, work_permit):
    before = rows(chat_session)
    context = fresh()
    context["focus"]["type"] = "widget"
    response = send(api_client, chat_session, "Explique.", context=context)
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["errors"][0]["field"] == "focus.type"
    response = send(api_client, chat_session, "Explique.", context=fresh(contextVersion="7"))
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["errors"][0] == {
        "field": "contextVersion",
        "message": "must be of type integer",
    }


def test_a_nul_character_or_an_oversized_version_is_400_naming_the_field_and_leaves_no_row(
    api_client, chat_session, scripted_llm, work_permit
):
    # Both used to pass validation and fail at the snapshot insert: a 500 (jsonb refuses
    # U+0000) and a VALIDATION_ERROR about the model's "version" column.
    before = rows(chat_session)
    context = fresh()
    context["selection"]["displayName"] = "PT\x00-2026"
    response = send(api_client, chat_session, "Explique.", context=context)
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["errors"][0]["field"] == "selection.displayName"
    response = send(api_client, chat_session, "Explique.", context=fresh(contextVersion=2**31))
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["errors"][0]["field"] == "contextVersion"


def test_a_lone_surrogate_in_the_context_is_400_naming_the_field_and_leaves_no_row(
    api_client, chat_session, scripted_llm, work_permit
):
    # Legal JSON ("\\ud800"), not Unicode: the request fingerprint used to crash with a 500.
    before = rows(chat_session)
    body = json.dumps({"message": "Explique.", "context": fresh()}).replace('"Validade"', '"Validade\\ud800"', 1)
    response = api_client.post(f"/api/v1/sessions/{chat_session.pk}/messages", body, content_type="application/json")
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["errors"][0] == {
        "field": "focus.label",
        "message": "is not valid Unicode text",
    }


def test_unknown_base_snapshot_is_409_and_leaves_no_row(api_client, chat_session, scripted_llm, work_permit):
    before = rows(chat_session)
    payload = {"baseSnapshotId": 987654, "delta": {"contextVersion": 8}}
    response = send(api_client, chat_session, "Explique.", context=payload)
    assert_rejected(response, 409, "UNKNOWN_BASE_CONTEXT", before, chat_session, scripted_llm)


def test_another_sessions_base_snapshot_is_409(api_client, chat_session, scripted_llm, work_permit, user, agents):
    first = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    scripted_llm.requests.clear()
    other = Session.objects.create(tenant=chat_session.tenant, user=user, agent=chat_session.agent)
    before = rows(other)
    payload = {"baseSnapshotId": first["contextSnapshotId"], "delta": {"contextVersion": 8, "capturedAt": _now()}}
    response = send(api_client, other, "Explique.", context=payload)
    assert_rejected(response, 409, "UNKNOWN_BASE_CONTEXT", before, other, scripted_llm)


def test_a_delta_is_validated_as_a_whole_context(api_client, chat_session, scripted_llm, work_permit):
    first = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    scripted_llm.requests.clear()
    before = rows(chat_session)
    # Removing a required member through the patch.
    payload = {"baseSnapshotId": first["contextSnapshotId"], "delta": {"page": None, "capturedAt": _now()}}
    response = send(api_client, chat_session, "Explique.", context=payload)
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)
    # Keeping the base's old capturedAt: stale by age.
    payload = {"baseSnapshotId": first["contextSnapshotId"], "delta": {"contextVersion": 8}}
    ContextSnapshot.objects.filter(pk=first["contextSnapshotId"]).update(
        context={**ContextSnapshot.objects.get().context, "capturedAt": "2020-01-01T00:00:00Z"}
    )
    response = send(api_client, chat_session, "Explique.", context=payload)
    assert_rejected(response, 409, "STALE_CONTEXT_AGE", before, chat_session, scripted_llm)
    # Smuggling other members next to the delta.
    payload = {"baseSnapshotId": first["contextSnapshotId"], "delta": {}, "page": {}}
    response = send(api_client, chat_session, "Explique.", context=payload)
    assert_rejected(response, 400, "INVALID_CONTEXT", before, chat_session, scripted_llm)


def test_a_delta_is_sized_and_authorized_as_a_whole_context(
    api_client, chat_session, scripted_llm, work_permit, other_tenant
):
    first = ok(api_client, chat_session, "Explique.", fresh(), scripted_llm)
    scripted_llm.requests.clear()
    before = rows(chat_session)
    base = first["contextSnapshotId"]
    # Each part is under the limit; base plus delta is not.
    delta = {"page": {"metadata": {"notes": "x" * 4000}}, "contextVersion": 8, "capturedAt": _now()}
    response = send(api_client, chat_session, "Explique.", context={"baseSnapshotId": base, "delta": delta})
    assert_rejected(response, 413, "CONTEXT_SIZE_LIMIT_EXCEEDED", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"]["size"] > 5120
    # Pointing the selection at another tenant's record through a patch.
    AccessibleEntity.objects.create(tenant=other_tenant, entity_type="workPermit", entity_id="9999")
    delta = {"selection": {"entityId": "9999"}, "contextVersion": 8, "capturedAt": _now()}
    response = send(api_client, chat_session, "Explique.", context={"baseSnapshotId": base, "delta": delta})
    assert_rejected(response, 403, "CONTEXT_FORBIDDEN", before, chat_session, scripted_llm)
    assert response.json()["error"]["details"] == {"fields": ["selection"]}


def test_a_delta_over_a_base_whose_route_param_looks_like_a_cpf_is_authorized(
    api_client, chat_session, scripted_llm, work_permit, tenant
):
    # The base is stored masked; an entity id masked as "[REDACTED]" made every later delta a 403.
    AccessibleEntity.objects.create(tenant=tenant, entity_type="workPermit", entity_id="12345678909")
    context = fresh()
    context["navigation"]["params"] = {"workPermitId": "12345678909"}
    first = ok(api_client, chat_session, "Explique.", context, scripted_llm)
    stored = ContextSnapshot.objects.get(pk=first["contextSnapshotId"]).context
    assert stored["navigation"]["params"] == {"workPermitId": "12345678909"}
    delta = {"contextVersion": 8, "capturedAt": _now()}
    _delta(api_client, chat_session, scripted_llm, first["contextSnapshotId"], delta)


def test_the_authorizer_is_pluggable(api_client, chat_session, scripted_llm, settings):
    settings.CONTEXT_AUTHORIZER = "tests.conversations.test_context_turns.deny_everything"
    before = rows(chat_session)
    response = send(
        api_client, chat_session, "Oi", context=minimal_context(selection={"entityType": "quote", "entityId": "1"})
    )
    assert_rejected(response, 403, "CONTEXT_FORBIDDEN", before, chat_session, scripted_llm)
    settings.CONTEXT_AUTHORIZER = "tests.conversations.test_context_turns.allow_everything"
    ok(
        api_client,
        chat_session,
        "Oi",
        minimal_context(selection={"entityType": "quote", "entityId": "1"}),
        scripted_llm,
    )


def deny_everything(*, tenant, user, entities):
    return list(entities)


def allow_everything(*, tenant, user, entities):
    return []


def test_a_turn_that_fails_after_the_snapshot_leaves_neither_message_nor_snapshot(
    api_client, chat_session, scripted_llm, work_permit, monkeypatch
):
    from conversations.services.turns import service

    def boom(**kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(service, "agent_loop", boom)
    before = rows(chat_session)
    api_client.raise_request_exception = False
    response = send(api_client, chat_session, "Explique.", context=fresh())
    assert response.status_code == 500
    after = rows(chat_session)
    assert (after["snapshots"], after["messages"]) == (before["snapshots"], before["messages"])


def test_the_context_engine_adds_a_fixed_number_of_queries(
    chat_session, user, tenant, work_permit, django_assert_num_queries
):
    from conversations.context.services import context_prepare, context_resolve, context_snapshot_create

    with django_assert_num_queries(1):  # the authorizer: every entity in one query
        prepared = context_prepare(tenant=tenant, user=user, session=chat_session, payload=fresh())
    with django_assert_num_queries(2):  # the session's last snapshot, the insert
        context_snapshot_create(session=chat_session, prepared=prepared)
    with django_assert_num_queries(1):  # the registry, for every id in the context and its parents
        context_resolve(prepared=prepared, text="Explique isso.")
