"""Concurrent turns on one session, against real PostgreSQL row locks.

These tests commit (transactional_db): the turn's short transactions and the
scripted server's callbacks run on other threads with their own connections.
"""

import threading

import pytest
from django.db import connections

from conversations.models import Message, Session
from knowledge.catalog import get_active_catalog
from knowledge.models import Package
from knowledge.services import package_update
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db(transaction=True)


def _run_in_threads(*targets):
    results, errors = {}, []

    def wrap(name, func):
        try:
            results[name] = func()
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrap, args=(name, func)) for name, func in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert not errors, errors
    return results


def test_concurrent_messages_never_lose_a_fetch_or_a_count(api_client, chat_session, scripted_llm):
    both_in_flight = threading.Barrier(2, timeout=10)
    wanted = {"preço": "PRICING_RULES", "prazo": "DELIVERY_TIMELINES"}

    def model(request):
        package_id = next(v for k, v in wanted.items() if k in request.user_text)
        if f"### {package_id} " in request.system_prompt:
            return {"s": 0, "message": f"ok {package_id}"}
        both_in_flight.wait()  # both turns are open (counter reset) before either fetch is recorded
        return {"s": 99, "context_needed": package_id}

    for _ in range(4):
        scripted_llm.call(model)

    results = _run_in_threads(
        ("price", lambda: send(api_client, chat_session, "Qual o preço?").json()),
        ("deadline", lambda: send(api_client, chat_session, "Qual o prazo?").json()),
    )

    assert results["price"]["reply"] == "ok PRICING_RULES"
    assert results["deadline"]["reply"] == "ok DELIVERY_TIMELINES"
    chat_session.refresh_from_db()
    assert sorted(chat_session.collected_packages) == ["DELIVERY_TIMELINES", "PRICING_RULES"]
    assert chat_session.context_enrichment_count == 2
    assert chat_session.messages.count() == 4


def test_concurrent_duplicate_with_one_idempotency_key_calls_the_provider_once(api_client, chat_session, scripted_llm):
    release = threading.Event()
    entered = threading.Event()

    def slow_model(request):
        entered.set()
        release.wait(timeout=10)
        return {"s": 0, "message": "uma vez"}

    scripted_llm.call(slow_model)
    outcome = {}

    def first():
        outcome["first"] = send(api_client, chat_session, "oi", key="dup-1")

    thread = threading.Thread(target=lambda: (first(), connections.close_all()))
    thread.start()
    assert entered.wait(timeout=10)
    duplicate = send(api_client, chat_session, "oi", key="dup-1")
    release.set()
    thread.join(timeout=20)

    assert duplicate.status_code == 409
    assert duplicate.json()["error"]["code"] == "IDEMPOTENT_REQUEST_IN_PROGRESS"
    assert outcome["first"].status_code == 201
    retry = send(api_client, chat_session, "oi", key="dup-1")
    assert retry.json() == outcome["first"].json()
    assert len(scripted_llm.requests) == 1


def test_admin_edit_between_two_calls_of_one_turn_reaches_the_second_call(
    api_client, chat_session, scripted_llm, curator
):
    def fetch_then_edit(request):
        # Runs in the server thread while the turn waits: a curator saves a new body.
        package = Package.objects.get(package_id="PRICING_RULES")
        package_update(acting_user=curator, package=package, data={**package.content(), "body": "Preço novo: R$ 7."})
        connections.close_all()
        return {"s": 99, "context_needed": "PRICING_RULES"}

    scripted_llm.call(fetch_then_edit).reply_json({"s": 0, "message": "ok"})

    data = send(api_client, chat_session, "Preço?").json()

    assert "Preço novo: R$ 7." in scripted_llm.requests[1].system_prompt
    assert data["packages"] == [{"id": "PRICING_RULES", "revision": get_active_catalog().get("PRICING_RULES").revision}]
    assert Message.objects.filter(session=chat_session).count() == 2
    assert Session.objects.get(pk=chat_session.pk).collected_packages == ["PRICING_RULES"]


def test_provider_call_holds_no_transaction_or_session_lock(api_client, chat_session, scripted_llm):
    from django.db import transaction

    observed = {}

    def model(request):
        # Another connection can lock the session row right now: the turn holds no lock.
        with transaction.atomic():
            Session.objects.select_for_update(nowait=True).get(pk=chat_session.pk)
            observed["locked_by_other"] = True
        connections.close_all()
        return {"s": 0, "message": "ok"}

    scripted_llm.call(model)

    assert send(api_client, chat_session, "oi").json()["reply"] == "ok"
    assert observed == {"locked_by_other": True}


def test_a_fetch_waits_for_a_concurrent_writer_and_keeps_its_update(api_client, chat_session, scripted_llm):
    """Deterministic lost-update check: another transaction holds the session row (as a concurrent
    turn's fetch does) while this turn records its own fetch; both packages and both counts survive."""
    from django.db import transaction

    locked, release = threading.Event(), threading.Event()

    def concurrent_fetch():
        try:
            with transaction.atomic():
                row = Session.objects.select_for_update().get(pk=chat_session.pk)
                locked.set()
                release.wait(timeout=10)
                row.collected_packages = [*row.collected_packages, "GENOME_SIZES"]
                row.context_enrichment_count += 1
                row.save(update_fields=["collected_packages", "context_enrichment_count"])
        finally:
            connections.close_all()

    writer = threading.Thread(target=concurrent_fetch)

    def model(request):
        writer.start()
        assert locked.wait(timeout=10)
        # The turn records its fetch while the writer still holds the row; release it shortly after.
        threading.Timer(0.3, release.set).start()
        return {"s": 99, "context_needed": "PRICING_RULES"}

    scripted_llm.call(model).reply_json({"s": 0, "message": "ok"})

    assert send(api_client, chat_session, "Preço?").json()["status"] == "answered"
    writer.join(timeout=10)

    chat_session.refresh_from_db()
    assert chat_session.collected_packages == ["GENOME_SIZES", "PRICING_RULES"]
    assert chat_session.context_enrichment_count == 2


def test_two_first_ratings_of_one_reply_at_once_both_succeed_and_credit_the_policy_once(
    api_client, chat_session, scripted_llm, tenant, user, monkeypatch
):
    from conversations.models import MessageFeedback
    from conversations.services import feedback as feedback_service

    scripted_llm.reply_json({"s": 0, "message": "Olá"})
    reply_id = send(api_client, chat_session, "Olá").json()["message_id"]
    # Both requests past their read of the existing rating (none) before either writes: without a
    # lock on the reply both inserted and the second died on the unique constraint (a 500).
    both_read = threading.Barrier(2, timeout=3)
    credits = []
    real = feedback_service.policy_feedback

    def policy_feedback(**kwargs):
        credits.append(kwargs["rating"])
        try:
            both_read.wait()
        except threading.BrokenBarrierError:
            pass  # the other request waits on the reply's lock: it cannot arrive here first
        return real(**kwargs)

    monkeypatch.setattr(feedback_service, "policy_feedback", policy_feedback)
    url = f"/api/v1/sessions/{chat_session.pk}/messages/{reply_id}/feedback"
    results = _run_in_threads(
        ("a", lambda: api_client.post(url, {"rating": "up"}, format="json").status_code),
        ("b", lambda: api_client.post(url, {"rating": "up"}, format="json").status_code),
    )
    assert sorted(results.values()) == [200, 201]
    assert credits == ["up"]  # the second saw the first's rating: the same one, a no-op
    assert MessageFeedback.objects.filter(message_id=reply_id).count() == 1
