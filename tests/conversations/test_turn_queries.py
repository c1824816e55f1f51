"""Every database round trip of an agent turn, named and justified.

A turn is the hot endpoint (issue 17): each query here costs a round trip on
every message, so the list is pinned statement by statement. Under the test
transaction an ``atomic`` block shows as SAVEPOINT/RELEASE; in production the
same block is BEGIN/COMMIT (round trips too, not captured by Django).
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db

ANSWER = {"s": 0, "message": "Pronto."}

# (statement pattern, why the turn needs it)
TURN_QUERIES = [
    (
        r'SELECT .* FROM "authtoken_token" .*JOIN "auth_user" .*JOIN "accounts_membership" .*JOIN "accounts_tenant"',
        "authentication: the token with its user, membership and tenant in one join (HasTenant reads them)",
    ),
    (r"SAVEPOINT", "turn_open's transaction: the lock, the inbound row and the counter commit together"),
    (
        r'SELECT .*, \(SELECT "knowledge_catalogstate"."version" .*\) FROM "conversations_session" '
        r'.*JOIN "conversations_agent" .* FOR UPDATE OF "conversations_session"',
        "the tenant's session, locked, with its agent: the 404, the idempotency and status checks, "
        "collected_packages as of this turn, the agent's prompt and model; read once for the whole turn. "
        "Along with it, the active catalog's version: an admin edit shows on the next turn (the catalog "
        "is cached per version); no round trip of its own",
    ),
    (
        r'WITH along AS \(UPDATE "conversations_session" SET "context_enrichment_count" = 0, "updated_at" = .*'
        r'INSERT INTO "conversations_message"',
        "the inbound message (status received, with its context snapshot) and, in the same statement, the "
        "seed's rule: the fetch budget restarts with every message; updated_at is the last activity",
    ),
    (r"RELEASE SAVEPOINT", "commit: the message is accepted before the model is called"),
    (
        r'SELECT "conversations_message"."role".* FROM "conversations_message"',
        "the history the model sees (last HISTORY_MESSAGES finished messages)",
    ),
    (r"SAVEPOINT", "turn_close's transaction: reply, hand-off, session status and inbound status together"),
    (
        r'SELECT "conversations_session"."status" FROM "conversations_session" .* FOR UPDATE$',
        "the session locked again: its status now (a concurrent close or hand-off), and a hand-off's transition",
    ),
    (
        r'WITH along AS \(UPDATE "conversations_message" SET "status" = .* INSERT INTO "conversations_message"',
        "the reply, with the stored response (idempotent replays read it), and in the same statement "
        "the inbound message answered (status processed)",
    ),
    (r"RELEASE SAVEPOINT", "commit"),
]
# The knowledge router reads the catalog version too (knowledge.routing_service: its index is
# rebuilt when the version moves); within a turn that read is shared with the turn's own, which
# the session's locked read carries (knowledge.selectors.catalog_version_read_once and
# catalog_version_seen), so neither adds a query.


def turn_statements(api_client, chat_session, scripted_llm) -> list[str]:
    scripted_llm.reply_json(ANSWER).reply_json(ANSWER)
    send(api_client, chat_session, "aquece o catálogo")  # the catalog and the router's index are built
    with CaptureQueriesContext(connection) as captured:
        response = send(api_client, chat_session, "qual o prazo de entrega?")
    assert response.status_code == 201, response.json()
    assert response.json()["status"] == "answered"
    return [query["sql"] for query in captured.captured_queries]


def assert_statements(statements: list[str], expected: list[tuple[str, str]]) -> None:
    assert len(statements) == len(expected), "\n".join(s[:120] for s in statements)
    for sql, (pattern, why) in zip(statements, expected, strict=True):
        assert re.match(pattern, sql), f"expected {pattern!r} ({why}), got {sql[:200]!r}"


def test_an_answered_turn_is_these_queries(api_client, chat_session, scripted_llm):
    assert_statements(turn_statements(api_client, chat_session, scripted_llm), TURN_QUERIES)


def test_the_knowledge_router_adds_no_query(api_client, chat_session, scripted_llm, settings):
    settings.AGENT_KNOWLEDGE_ROUTER = True
    assert_statements(turn_statements(api_client, chat_session, scripted_llm), TURN_QUERIES)


# POST /api/v1/sessions: a load opens one every few turns.
SESSION_CREATE_QUERIES = [
    (r'SELECT .* FROM "authtoken_token" .*JOIN "auth_user"', "authentication, as for a turn"),
    (r"SAVEPOINT", "session_create's transaction"),
    (
        r'SELECT .* FROM "conversations_agent" WHERE \("conversations_agent"."is_active" AND "conversations_agent"."is_default"\)',
        "the default agent (the request names none)",
    ),
    (
        r'INSERT INTO "conversations_session"',
        "the session; its tenant, user and agent were just read, so "
        "full_clean checks none of them with a query (the foreign keys hold them)",
    ),
    (r"RELEASE SAVEPOINT", "commit"),
]


def test_opening_a_session_is_these_queries(api_client, agents):
    with CaptureQueriesContext(connection) as captured:
        response = api_client.post("/api/v1/sessions", {}, format="json")
    assert response.status_code == 201, response.json()
    assert_statements([query["sql"] for query in captured.captured_queries], SESSION_CREATE_QUERIES)


def test_the_catalog_version_is_read_again_outside_a_turn():
    from knowledge.selectors import catalog_version_get, catalog_version_read_once, catalog_version_reread

    with CaptureQueriesContext(connection) as outside:
        catalog_version_get()
        catalog_version_get()
    with CaptureQueriesContext(connection) as inside, catalog_version_read_once():
        first = catalog_version_get()
        assert catalog_version_get() == first
        catalog_version_reread()
        catalog_version_get()
    assert len(outside.captured_queries) == 2
    assert len(inside.captured_queries) == 2  # once, and once more after the reread


def test_a_catalog_version_read_along_another_statement_is_the_turns_read():
    from knowledge.selectors import catalog_version_get, catalog_version_read_once, catalog_version_seen

    with CaptureQueriesContext(connection) as inside, catalog_version_read_once():
        catalog_version_seen(7)
        assert catalog_version_get() == 7
        catalog_version_seen(8)  # the block already has its version
        assert catalog_version_get() == 7
    catalog_version_seen(9)  # outside a turn: nothing to remember it in
    with CaptureQueriesContext(connection) as outside:
        assert catalog_version_get() != 9
    assert (len(inside.captured_queries), len(outside.captured_queries)) == (0, 1)


def test_a_turn_with_a_fetch_adds_its_locked_update(api_client, chat_session, scripted_llm, django_assert_num_queries):
    scripted_llm.reply_json(ANSWER)
    send(api_client, chat_session, "aquece o catálogo")
    scripted_llm.reply_json({"s": 99, "context_needed": "PRICING_RULES"}).reply_json(ANSWER)
    # the answered turn's 11, plus the fetch's transaction (savepoint, lock, update, release) and the
    # catalog version re-read before the second model call (an edit between calls shows at once)
    with django_assert_num_queries(len(TURN_QUERIES) + 5):
        assert send(api_client, chat_session, "Quanto custa?").json()["status"] == "answered"


def test_the_hand_written_session_read_builds_what_the_orm_would(chat_session, tenant, other_tenant):
    from django.db import transaction

    from conversations.models import Session
    from conversations.services.turns.session_rows import session_with_agent_lock

    chat_session.collected_packages = ["PRICING_RULES", "DELIVERY"]
    chat_session.save()
    chat_session.agent.settings = {"temperature": 0.2}
    chat_session.agent.save()
    expected = Session.objects.select_related("agent").get(pk=chat_session.pk)
    with transaction.atomic():
        session = session_with_agent_lock(tenant=tenant, session_id=chat_session.pk)
        assert session_with_agent_lock(tenant=other_tenant, session_id=chat_session.pk) is None
        assert session_with_agent_lock(tenant=tenant, session_id=10**9) is None
    for got, want in [(session, expected), (session.agent, expected.agent)]:
        fields = type(want)._meta.concrete_fields
        assert [getattr(got, f.attname) for f in fields] == [getattr(want, f.attname) for f in fields]
    assert session.collected_packages == ["PRICING_RULES", "DELIVERY"]  # JSON, decoded as the ORM does
    assert session.agent.settings == {"temperature": 0.2}
    assert session.tenant is tenant


def test_the_hand_written_insert_stores_what_save_would(chat_session, django_assert_num_queries):
    from conversations.models import Message
    from common.raw_select import insert

    def message():
        return Message(
            session=chat_session,
            role="assistant",
            text="Olá",
            status="answered",
            packages=[{"id": "PRICING_RULES", "revision": 2}],
            timings_ms={"total": 3},
            grounding=None,
            response={"reply": "Olá", "nested": {"ü": [1, 2.5, None]}},
        )

    saved = message()
    saved.save()
    written = message()
    with django_assert_num_queries(1):
        insert(written)
    assert written.pk and written.pk != saved.pk and not written._state.adding and written.created_at
    fields = [f.attname for f in Message._meta.concrete_fields if f.attname not in ("id", "created_at")]
    stored = Message.objects.filter(pk__in=[saved.pk, written.pk]).order_by("id").values(*fields)
    assert stored[0] == stored[1]
    assert stored[1]["response"] == {"reply": "Olá", "nested": {"ü": [1, 2.5, None]}}


def test_an_insert_along_an_update_is_one_statement_that_changes_both(chat_session, django_assert_num_queries):
    from conversations.models import Message, Session
    from common.raw_select import insert

    inbound = Message(session=chat_session, role="user", text="Oi", status="received")
    along = ('UPDATE "conversations_session" SET "context_enrichment_count" = %s WHERE "id" = %s', [7, chat_session.pk])
    with django_assert_num_queries(1):
        insert(inbound, along=along)
    assert Message.objects.get(pk=inbound.pk).text == "Oi"
    assert Session.objects.get(pk=chat_session.pk).context_enrichment_count == 7


def test_an_insert_along_an_update_of_no_row_fails_and_leaves_nothing(chat_session):
    from django.db import DatabaseError, transaction

    from conversations.models import Message
    from common.raw_select import insert

    before = Message.objects.count()
    along = ('UPDATE "conversations_message" SET "status" = %s WHERE "id" = %s', ["processed", 10**9])
    with pytest.raises(DatabaseError, match="expected one row, 0 changed"), transaction.atomic():
        insert(Message(session=chat_session, role="assistant", text="Oi", status="answered"), along=along)
    assert Message.objects.count() == before


@pytest.mark.django_db(transaction=True)
def test_an_insert_along_an_update_is_refused_outside_a_transaction(chat_session):
    # In autocommit the INSERT would be committed before the UPDATE's row count is checked.
    from django.db.transaction import TransactionManagementError

    from conversations.models import Message
    from common.raw_select import insert

    before = Message.objects.count()
    along = ('UPDATE "conversations_message" SET "status" = %s WHERE "id" = %s', ["processed", 10**9])
    with pytest.raises(TransactionManagementError):
        insert(Message(session=chat_session, role="assistant", text="Oi", status="answered"), along=along)
    assert Message.objects.count() == before
