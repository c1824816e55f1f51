"""Operators' admin: agents, sessions with their messages, the hand-off queue."""

import re

import pytest

from conversations.models import Handoff, Session
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser(username="ops", password="x", email="ops@example.com")
    client.force_login(admin)
    client.admin_user = admin
    return client


@pytest.fixture
def handoffs(api_client, chat_session, scripted_llm, tenant, user, agents):
    """Two hand-offs in two sessions: one uncertainty, one provider outage."""
    scripted_llm.reply_json({"s": 99, "context_needed": "NOPE"})
    send(api_client, chat_session, "?")
    other = Session.objects.create(tenant=tenant, user=user, agent=agents["comercial"])
    scripted_llm.status(500)
    send(api_client, other, "?")
    return {h.reason: h for h in Handoff.objects.all()}


def test_handoff_queue_lists_open_handoffs_and_filters_by_reason(admin_client, handoffs):
    page = admin_client.get("/admin/conversations/handoff/")
    assert page.status_code == 200
    assert page.context["cl"].result_count == 2

    page = admin_client.get("/admin/conversations/handoff/?reason=uncertainty")
    assert [h.reason for h in page.context["cl"].result_list] == ["uncertainty"]


def test_handoff_queue_shows_the_api_reason_codes_and_filters_on_each(admin_client, handoffs):
    from conversations.models import HandoffReason

    page = admin_client.get("/admin/conversations/handoff/")
    cells = re.findall(r'<td class="field-reason_code">([^<]*)</td>', page.content.decode())
    assert sorted(cells) == ["provider_unavailable", "uncertainty"]
    for code in (
        "uncertainty",
        "budget_exceeded",
        "iteration_cap",
        "provider_unavailable",
        "invalid_reply",
        "agent_request",
    ):
        assert code in HandoffReason.values
        page = admin_client.get(f"/admin/conversations/handoff/?reason={code}")
        assert page.status_code == 200
        assert {h.reason for h in page.context["cl"].result_list} <= {code}


def test_mark_resolved_action_resolves_and_reopens_the_session(admin_client, handoffs):
    handoff = handoffs["uncertainty"]

    response = admin_client.post(
        "/admin/conversations/handoff/",
        {"action": "mark_resolved", "_selected_action": [handoff.pk]},
        follow=True,
    )

    assert response.status_code == 200
    handoff.refresh_from_db()
    assert handoff.resolved_by == admin_client.admin_user
    assert handoff.session.status == "open"
    open_queue = admin_client.get("/admin/conversations/handoff/")
    assert [h.reason for h in open_queue.context["cl"].result_list] == ["provider_unavailable"]
    resolved = admin_client.get("/admin/conversations/handoff/?state=resolved")
    assert [h.pk for h in resolved.context["cl"].result_list] == [handoff.pk]


def test_session_page_shows_its_messages_inline(admin_client, handoffs):
    session = handoffs["uncertainty"].session
    page = admin_client.get(f"/admin/conversations/session/{session.pk}/change/")
    assert page.status_code == 200
    content = page.content.decode()
    assert "NOPE" in content  # the hand-off detail
    assert "Vou encaminhar sua mensagem" in content


def test_session_and_agent_lists_render(admin_client, handoffs):
    assert admin_client.get("/admin/conversations/session/?status=handed_off").status_code == 200
    assert admin_client.get("/admin/conversations/agent/").status_code == 200
    assert admin_client.get("/admin/conversations/message/").status_code == 200


def test_close_sessions_action(admin_client, handoffs):
    session = handoffs["uncertainty"].session
    admin_client.post("/admin/conversations/session/", {"action": "close_sessions", "_selected_action": [session.pk]})
    session.refresh_from_db()
    assert session.status == "closed"


def test_agent_is_editable_in_the_admin(admin_client, agents):
    agent = agents["comercial"]
    page = admin_client.get(f"/admin/conversations/agent/{agent.pk}/change/")
    assert page.status_code == 200
    response = admin_client.post(
        f"/admin/conversations/agent/{agent.pk}/change/",
        {
            "slug": agent.slug,
            "name": "Comercial 2",
            "system_prompt": "Novo prompt.",
            "provider": "openai",
            "model": "",
            "settings": "{}",
            "is_active": "on",
        },
    )
    assert response.status_code == 200  # re-rendered with an error: openai needs a base URL
    assert "LLM_BASE_URL" in response.content.decode()
    agent.refresh_from_db()
    assert agent.name == "Comercial"


# --- who may work the queue ----------------------------------------------------------------------


def _logged_in(client, user):
    client.force_login(user)
    return client


def _resolve(client, handoff):
    return client.post(
        "/admin/conversations/handoff/", {"action": "mark_resolved", "_selected_action": [handoff.pk]}, follow=True
    )


def test_curators_work_the_handoff_queue_and_edit_agents(client, curator, handoffs, agents):
    """The demo account is a curator: it reaches the queue, resolves hand-offs and edits agents."""
    _logged_in(client, curator)
    assert client.get("/admin/conversations/handoff/").status_code == 200
    assert client.get(f"/admin/conversations/session/{handoffs['uncertainty'].session_id}/change/").status_code == 200

    _resolve(client, handoffs["uncertainty"])

    handoffs["uncertainty"].refresh_from_db()
    assert handoffs["uncertainty"].resolved_by == curator
    assert curator.has_perm("conversations.change_agent")


def test_operators_resolve_handoffs_but_do_not_edit_agents(client, django_user_model, handoffs):
    from django.contrib.auth.models import Group

    from conversations.apps import OPERATORS_GROUP

    operator = django_user_model.objects.create_user(username="op", password="x", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATORS_GROUP))
    _logged_in(client, operator)

    _resolve(client, handoffs["provider_unavailable"])

    handoffs["provider_unavailable"].refresh_from_db()
    assert handoffs["provider_unavailable"].resolved_by == operator
    assert client.get("/admin/conversations/agent/").status_code == 200  # may read agents
    assert not operator.has_perm("conversations.change_agent")
    assert not operator.has_perm("knowledge.change_package")


def test_staff_who_may_only_view_cannot_resolve_a_handoff(client, django_user_model, handoffs):
    from django.contrib.auth.models import Permission

    viewer = django_user_model.objects.create_user(username="viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_handoff"))
    _logged_in(client, viewer)
    assert client.get("/admin/conversations/handoff/").status_code == 200

    _resolve(client, handoffs["uncertainty"])

    handoffs["uncertainty"].refresh_from_db()
    assert handoffs["uncertainty"].resolved_at is None


def test_staff_without_a_group_do_not_see_the_queue(client, staff_reader, handoffs):
    assert _logged_in(client, staff_reader).get("/admin/conversations/handoff/").status_code == 403
