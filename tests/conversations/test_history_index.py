"""The turn's history read is one range of the (session, id) index, whatever the statistics say."""

import pytest
from django.db import connection

from conversations.models import Message, MessageRole, MessageStatus, Session
from conversations.selectors import _HISTORY_SQL, session_history


@pytest.fixture
def sessions(tenant, user, agents):
    made = [Session.objects.create(tenant=tenant, user=user, agent=agents["atendimento"]) for _ in range(3)]
    rows = [
        Message(session=s, role=MessageRole.USER, text=f"m{i}", status=MessageStatus.PROCESSED)
        for i in range(400)
        for s in made
    ]
    Message.objects.bulk_create(rows)
    return made


def test_history_reads_the_session_id_index(sessions):
    session = sessions[1]
    last = session.messages.order_by("-id").first()
    with connection.cursor() as cursor:
        # Statistics say nothing useful (the table was just filled); a sequential scan is off the
        # table so the plan shows which index the read would take.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + _HISTORY_SQL, [session.pk, last.id, MessageStatus.RECEIVED, 8])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "message_session_id_idx" in plan, plan
    assert "Sort" not in plan, plan  # the index gives the order: no sort of the session's messages


def test_history_is_the_sessions_own_last_messages_oldest_first(sessions):
    session = sessions[2]
    last = session.messages.order_by("-id").first()
    history = session_history(session=session, before=last, limit=3)
    assert history == [("user", "m396"), ("user", "m397"), ("user", "m398")]
