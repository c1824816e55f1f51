"""The hand-written statements of common.raw_select: what they must not silently skip."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import signals
from django.db.transaction import TransactionManagementError

from common import raw_select
from conversations.models import Message, Session
from conversations.services.turns import session_rows

ROOT = Path(__file__).resolve().parents[2]

# Every module that writes rows by hand (raw INSERT/UPDATE, or raw_select.insert). A new one must
# be added here, and its statements to the checks below.
HAND_WRITING_MODULES = {"common/raw_select.py", "conversations/services/turns/session_rows.py"}
# Models raw_select.insert writes (the turn's inbound and reply), with the callable defaults the
# callers are known to get right: Message(...) applies them before insert() reads the fields.
INSERTED = {Message: {"packages", "timings_ms"}}

_RAW_WRITE = re.compile(r"\bINSERT\s+INTO\b|\bUPDATE\s+\"|raw_select import [^\n]*\binsert\b")
_UPDATE = re.compile(r'^UPDATE "(?P<table>\w+)" SET (?P<sets>.+?) WHERE ', re.S)


def _app_sources():
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.split("/")[0] in {".venv", "tests", "bench", "scripts"} or "/migrations/" in rel:
            continue
        yield rel, path.read_text(encoding="utf-8")


def _hand_written_updates():
    """(model, written columns) of each UPDATE statement session_rows writes by hand."""
    by_table = {m._meta.db_table: m for m in apps.get_models()}
    found = []
    for value in vars(session_rows).values():
        match = _UPDATE.match(value) if isinstance(value, str) else None
        if match:
            columns = set(re.findall(r'"(\w+)" = ', match["sets"]))
            found.append((by_table[match["table"]], columns))
    return found


def test_only_the_known_modules_write_rows_by_hand():
    writing = {rel for rel, text in _app_sources() if _RAW_WRITE.search(text)}
    assert writing == HAND_WRITING_MODULES


def test_the_hand_written_updates_are_found():
    assert sorted((m.__name__, sorted(c)) for m, c in _hand_written_updates()) == [
        ("Message", ["status"]),
        ("Session", ["context_enrichment_count", "updated_at"]),
    ]


@pytest.mark.parametrize("model", list(INSERTED), ids=lambda m: m.__name__)
def test_models_inserted_by_hand_have_nothing_save_would_add(model):
    assert raw_select.write_hazards(model, handled_defaults=INSERTED[model]) == []


def test_models_updated_by_hand_have_nothing_save_would_add():
    for model, columns in _hand_written_updates():
        assert raw_select.write_hazards(model, updated_columns=columns) == [], model


def _receiver(sender, **kwargs):
    pass


@pytest.mark.parametrize("signal", [signals.pre_save, signals.post_save], ids=["pre_save", "post_save"])
def test_a_save_receiver_is_a_hazard(signal):
    signal.connect(_receiver, sender=Message)
    try:
        name = "pre_save" if signal is signals.pre_save else "post_save"
        assert raw_select.write_hazards(Message, handled_defaults=INSERTED[Message]) == [f"{name} has receivers"]
        assert raw_select.write_hazards(Session, updated_columns={"updated_at"}) == []
    finally:
        signal.disconnect(_receiver, sender=Message)


def test_an_overridden_save_a_db_default_and_a_new_callable_default_are_hazards(monkeypatch):
    monkeypatch.setattr(Message, "save", lambda self, *a, **k: None, raising=False)
    monkeypatch.setattr(Message._meta.get_field("role"), "db_default", "user")
    monkeypatch.setattr(Message._meta.get_field("text"), "default", str)
    assert raw_select.write_hazards(Message, handled_defaults=INSERTED[Message]) == [
        "Message.save() is overridden",
        "role has a db_default",
        "text has a callable default",
    ]


def test_an_auto_now_column_left_out_of_an_update_is_a_hazard():
    assert raw_select.write_hazards(Session, updated_columns={"context_enrichment_count"}) == [
        "updated_at is auto_now but the UPDATE leaves it out"
    ]


@pytest.mark.django_db
def test_insert_refuses_a_model_with_a_save_receiver(chat_session, monkeypatch):
    monkeypatch.setattr(raw_select, "_insert_sql", {})  # the statement is checked when first written
    signals.post_save.connect(_receiver, sender=Message)
    try:
        with pytest.raises(ImproperlyConfigured, match="conversations.Message cannot be inserted by hand: post_save"):
            raw_select.insert(Message(session=chat_session, role="user", text="Olá", status="received"))
    finally:
        signals.post_save.disconnect(_receiver, sender=Message)
    assert not Message.objects.filter(text="Olá").exists()


# ------------------------------------------------------------------ row locks


@pytest.mark.django_db(transaction=True)
def test_a_hand_written_row_lock_outside_a_transaction_raises():
    # In autocommit the lock would end with the statement: the caller's read-modify-write would race.
    with pytest.raises(TransactionManagementError, match="outside of a transaction"):
        session_rows.session_status_lock(10**9)
    with pytest.raises(TransactionManagementError, match="outside of a transaction"):
        session_rows.session_with_agent_lock(tenant=SimpleNamespace(pk=1), session_id=10**9)
    with pytest.raises(TransactionManagementError):
        raw_select.locked("SELECT 1")


@pytest.mark.django_db(transaction=True)
def test_a_hand_written_row_lock_inside_a_transaction_is_taken():
    with transaction.atomic():
        assert raw_select.locked('SELECT 1 FROM "t"', of="t").endswith('FOR UPDATE OF "t"')
        assert session_rows.session_with_agent_lock(tenant=SimpleNamespace(pk=1), session_id=10**9) is None
        with pytest.raises(Session.DoesNotExist):
            session_rows.session_status_lock(10**9)
