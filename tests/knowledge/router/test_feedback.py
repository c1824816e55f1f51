"""Fetch feedback: an entry fetched after being listed arrives in full next time; it decays."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.routing_service import fetch_feedback_record, fetch_feedback_record_for_session
from knowledge.models import FetchFeedback
from knowledge.routing_service import route_context

from .conftest import find

QUESTION = "Quanto custa a urgência?"


@pytest.fixture
def listed_entry(catalog):
    result = route_context(message=QUESTION)
    package_id = result.listed[-1].id  # the weakest listed entry
    assert package_id not in result.full_ids
    return package_id


def _record(django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        return fetch_feedback_record(**kwargs)


def test_an_entry_fetched_after_being_listed_arrives_in_full_next_time(
    listed_entry, django_capture_on_commit_callbacks
):
    rows = _record(django_capture_on_commit_callbacks, query=QUESTION, package_id=listed_entry)
    assert [(r.package_id, r.listed_then_fetched, r.weight) for r in rows] == [(listed_entry, 1, 1.0)]
    result = route_context(message=QUESTION)
    assert listed_entry in result.full_ids
    note = next(n for n in find(result, listed_entry).why if n["signal"] == "feedback")
    assert "fetched after being listed" in note["detail"]


def test_a_close_question_benefits_and_an_unrelated_one_does_not(listed_entry, django_capture_on_commit_callbacks):
    _record(django_capture_on_commit_callbacks, query=QUESTION, package_id=listed_entry)
    assert listed_entry in route_context(message="urgência: quanto custa?").full_ids
    assert listed_entry in route_context(message="Quanto custa mesmo a urgência, por favor?").full_ids
    unrelated = route_context(message="Quais alvos de qPCR vocês têm?")
    assert not any(n["signal"] == "feedback" for d in unrelated.ranked() for n in d.why)


def test_the_signal_decays_with_its_half_life(listed_entry, django_capture_on_commit_callbacks, settings):
    _record(django_capture_on_commit_callbacks, query=QUESTION, package_id=listed_entry)
    half_life = timedelta(days=settings.KNOWLEDGE_FEEDBACK_HALF_LIFE_DAYS)
    row = FetchFeedback.objects.get()
    assert row.weight_at(row.last_fetched_at + half_life, half_life.total_seconds()) == pytest.approx(0.5)
    # Two half-lives later, one fetch no longer promotes.
    with django_capture_on_commit_callbacks(execute=True):  # the update moves the feedback version itself
        FetchFeedback.objects.update(last_fetched_at=timezone.now() - 2 * half_life)
    assert listed_entry not in route_context(message=QUESTION).full_ids
    # A new fetch adds to the decayed weight (0.25 + 1), it does not reset the history.
    rows = _record(django_capture_on_commit_callbacks, query=QUESTION, package_id=listed_entry)
    assert rows[0].listed_then_fetched == 2
    assert rows[0].weight == pytest.approx(1.25, abs=0.01)
    assert listed_entry in route_context(message=QUESTION).full_ids


def test_an_entry_that_already_arrived_in_full_is_not_recorded(catalog):
    full = route_context(message=QUESTION).full_ids[0]
    assert fetch_feedback_record(query=QUESTION, package_id=full) == []
    assert not FetchFeedback.objects.exists()


def test_feedback_is_scoped_to_its_tenant(listed_entry, tenant, other_tenant, django_capture_on_commit_callbacks):
    _record(django_capture_on_commit_callbacks, query=QUESTION, package_id=listed_entry, tenant=tenant)
    assert listed_entry in route_context(message=QUESTION, tenant=tenant).full_ids
    assert listed_entry not in route_context(message=QUESTION, tenant=other_tenant).full_ids


def test_a_fetch_through_the_package_endpoint_within_a_session_is_recorded(
    listed_entry, api_client, tenant, django_capture_on_commit_callbacks
):
    response = api_client.post("/api/v1/context", {"message": QUESTION, "session_key": "sess-1"}, format="json")
    assert listed_entry in [d["id"] for d in response.json()["listed"]]
    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.get(f"/api/v1/packages/{listed_entry}?session=sess-1").status_code == 200
    row = FetchFeedback.objects.get()
    assert (row.package_id, row.tenant_id, row.listed_then_fetched) == (listed_entry, tenant.pk, 1)
    # Without a session, or in another session, a plain read teaches nothing.
    api_client.get(f"/api/v1/packages/{listed_entry}")
    api_client.get(f"/api/v1/packages/{listed_entry}?session=other")
    assert FetchFeedback.objects.get().listed_then_fetched == 1


def test_session_fetch_service_for_the_agent_turn(listed_entry, django_capture_on_commit_callbacks):
    route_context(message=QUESTION, session_key="turn-7")
    with django_capture_on_commit_callbacks(execute=True):
        rows = fetch_feedback_record_for_session(session_key="turn-7", package_id=f"::{listed_entry}")
    assert [r.package_id for r in rows] == [listed_entry]


def test_feedback_is_visible_in_the_admin(listed_entry, client, curator, django_capture_on_commit_callbacks):
    _record(django_capture_on_commit_callbacks, query=QUESTION, package_id=listed_entry)
    client.force_login(curator)
    page = client.get("/admin/knowledge/fetchfeedback/")
    assert page.status_code == 200
    assert listed_entry in page.content.decode() and "1.00" in page.content.decode()


def test_two_interleaved_routes_of_one_session_are_both_remembered(catalog, monkeypatch):
    from knowledge import routing_service
    from knowledge.feedback import session_routes

    session_key = f"sess-{uuid.uuid4().hex}"
    real_get = routing_service.index_holder.get

    def get_while_another_route_runs(*args, **kwargs):
        # Another turn of the same session routes while this one is between its cache read and write.
        monkeypatch.setattr(routing_service.index_holder, "get", real_get)
        route_context(message="Qual o prazo de entrega?", session_key=session_key)
        return real_get(*args, **kwargs)

    monkeypatch.setattr(routing_service.index_holder, "get", get_while_another_route_runs)
    route_context(message=QUESTION, session_key=session_key)
    routes = session_routes(session_key=session_key, tenant_id=None)
    assert [r["query"] for r in routes] == ["Qual o prazo de entrega?", QUESTION]


def test_a_route_in_a_session_costs_three_redis_round_trips(catalog, monkeypatch):
    from redis.connection import Connection

    route_context(message=QUESTION)  # the route is cached: what follows is a turn's usual case
    sent = []
    real = Connection.send_packed_command
    monkeypatch.setattr(Connection, "send_packed_command", lambda self, *a, **k: sent.append(1) or real(self, *a, **k))
    route_context(message=QUESTION, session_key=f"sess-{uuid.uuid4().hex}")
    # the feedback version and router generation (one MGET), the cached route, the session's append
    assert len(sent) == 3
