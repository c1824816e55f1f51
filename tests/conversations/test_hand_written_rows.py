"""The hand-written SQL of the application: where it is, that it was reviewed, and what it must not skip.

Every SQL string the application hands to the database by hand (a cursor's ``execute`` /
``executemany``, a migration's ``schema_editor.execute`` or ``RunSQL``, ``Manager.raw``,
``RawSQL``, ``QuerySet.extra``, and the SQL ``common.raw_select``'s helpers take) is found by
walking each module's syntax tree, however the string is spelt (lower case, concatenated, a
constant, an alias of the helper). Each one either goes through the reviewed helper
(``common.raw_select.insert`` / ``locked``, whose statements are checked here or when first
written) or is listed in ``REVIEWED_SQL`` with what it is and why it may be written by hand.
"""

import ast
import re
import importlib
from dataclasses import dataclass
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
# Not application code: the test suite, benchmarks and one-off scripts (tools run by hand).
NOT_APPLICATION = {".venv", "tests", "bench", "scripts", "node_modules", "var"}
HELPER = "common/raw_select.py"  # the reviewed helper: its own statements are built from the models

# (module, function, the SQL argument as written) -> (kind, why it is written by hand). The kind is
# checked against the statement itself wherever the argument is a constant: a "read" that became an
# UPDATE fails. A write goes through raw_select.insert (checked by write_hazards), never this list.
REVIEWED_SQL = {
    ("accounts/authentication.py", "token_with_tenant", "sql"): (
        "read",
        "every API request: the token with its user, membership and tenant in one query, its columns "
        "written once by _token_query from the models (raw_select.columns), rows rebuilt by row_instances",
    ),
    ("conversations/selectors.py", "session_history", "_HISTORY_SQL"): (
        "read",
        "every turn: the session's last finished messages; pinned in tests/conversations/test_turn_queries.py",
    ),
    ("knowledge/selectors.py", "_catalog_version_read", "_VERSION_SQL"): (
        "read",
        "every turn: the catalog version, one indexed row; pinned in tests/conversations/test_turn_queries.py",
    ),
    ("common/health.py", "_check_database", "\"SELECT set_config('statement_timeout', %s, true)\""): (
        "read",
        "readiness probe: its statement timeout, local to its transaction (SET takes no bound parameter)",
    ),
    ("common/health.py", "_check_database", "'SELECT 1'"): ("read", "readiness probe: the database answers"),
    ("actions/migrations/0003_audit_rows_immutable_in_postgresql.py", "forwards", "CREATE"): (
        "ddl",
        "the audit rows' immutability trigger: PL/pgSQL, which no ORM operation writes",
    ),
    ("actions/migrations/0003_audit_rows_immutable_in_postgresql.py", "backwards", "DROP"): (
        "ddl",
        "drops that trigger",
    ),
}
# Models raw_select.insert writes (the turn's inbound and reply), with the callable defaults the
# callers are known to get right: Message(...) applies them before insert() reads the fields.
INSERTED = {Message: {"packages", "timings_ms"}}

_CURSOR_METHODS = {"execute", "executemany"}  # with an argument: a Redis pipeline's execute() takes none
_ORM_RAW = {"raw", "extra", "RawSQL", "RunSQL"}
_HELPERS = {"insert", "locked"}  # common.raw_select's functions that take SQL


@dataclass(frozen=True)
class SqlSite:
    path: str
    function: str  # qualified name of the enclosing function, "<module>" at top level
    call: str  # "execute", "raw", ..., or the helper's name
    sql: str  # the SQL argument as written (ast.unparse); "" for insert() without along
    line: int

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.path, self.function, self.sql)


class _SqlFinder(ast.NodeVisitor):
    def __init__(self, path: str):
        self.path = path
        self.scope: list[str] = []
        self.helper_names: dict[str, str] = {}  # local name -> raw_select function
        self.helper_modules: set[str] = set()  # names bound to the raw_select module
        self.sites: list[SqlSite] = []

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if node.module == "common.raw_select" and alias.name in _HELPERS:
                self.helper_names[alias.asname or alias.name] = alias.name
            elif node.module == "common" and alias.name == "raw_select":
                self.helper_modules.add(alias.asname or alias.name)

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == "common.raw_select":
                self.helper_modules.add(alias.asname or "common.raw_select")

    def _scoped(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _helper(self, func) -> str | None:
        if isinstance(func, ast.Name):
            return self.helper_names.get(func.id)
        if isinstance(func, ast.Attribute) and func.attr in _HELPERS and ast.unparse(func.value) in self.helper_modules:
            return func.attr
        return None

    def _add(self, node, call: str, sql) -> None:
        text = "" if sql is None else ast.unparse(sql)
        self.sites.append(SqlSite(self.path, ".".join(self.scope) or "<module>", call, text, node.lineno))

    def visit_Call(self, node):
        func, helper = node.func, self._helper(node.func)
        keywords = {k.arg: k.value for k in node.keywords}
        first = node.args[0] if node.args else keywords.get("sql")
        if helper == "locked":
            self._add(node, helper, first)
        elif helper == "insert":
            along = keywords.get("along")
            self._add(node, helper, along.elts[0] if isinstance(along, ast.Tuple) and along.elts else along)
        elif isinstance(func, ast.Attribute) and func.attr in _CURSOR_METHODS and first is not None:
            if not (isinstance(first, ast.Call) and self._helper(first.func)):  # the helper's site covers it
                self._add(node, func.attr, first)
        else:
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _ORM_RAW and (first is not None or keywords):
                self._add(node, name, first if first is not None else next(iter(keywords.values())))
        self.generic_visit(node)


def sql_sites(path: str, source: str) -> list[SqlSite]:
    finder = _SqlFinder(path)
    finder.visit(ast.parse(source))
    return finder.sites


def _application_sources():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.split("/")[0] not in NOT_APPLICATION:
            yield rel, path.read_text(encoding="utf-8")


def _all_sites() -> list[SqlSite]:
    return [site for rel, text in _application_sources() for site in sql_sites(rel, text)]


def statement_of(site: SqlSite) -> str | None:
    """The SQL a site passes, when it is a literal or a module-level constant; None otherwise."""
    try:
        node = ast.parse(site.sql, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        module = importlib.import_module(site.path.removesuffix(".py").replace("/", "."))
        value = getattr(module, node.id, None)
        return value if isinstance(value, str) else None
    return None


def statement_kind(sql: str) -> str:
    words = sql.split()
    first = words[0].upper() if words else ""
    if first == "SELECT" and "FOR UPDATE" not in sql.upper():
        return "read"
    if first in {"CREATE", "DROP", "ALTER"}:
        return "ddl"
    return "write"  # INSERT, UPDATE, DELETE, a data-modifying WITH, a locking read, anything unknown


def _hand_written_updates():
    """(model, written columns) of each UPDATE that raw_select.insert runs along its INSERT."""
    by_table = {m._meta.db_table: m for m in apps.get_models()}
    found = []
    for site in _all_sites():
        if site.call == "insert" and site.sql:
            match = _UPDATE.match(statement_of(site) or "")
            assert match, f"{site.path}:{site.line}: along= must be an UPDATE constant of its module"
            columns = set(re.findall(r'"(\w+)" = ', match["sets"]))
            found.append((by_table[match["table"]], columns))
    return found


_UPDATE = re.compile(r'^UPDATE "(?P<table>\w+)" SET (?P<sets>.+?) WHERE ', re.S)


def test_every_hand_written_statement_goes_through_the_helper_or_was_reviewed():
    sites = [s for s in _all_sites() if s.path != HELPER]
    unreviewed = [s for s in sites if s.call not in _HELPERS and s.key not in REVIEWED_SQL]
    assert unreviewed == []
    assert set(REVIEWED_SQL) - {s.key for s in sites} == set()  # no entry outlives its statement
    assert all(reason.strip() for _, reason in REVIEWED_SQL.values())


def test_a_reviewed_statement_is_what_its_review_says():
    for site in _all_sites():
        if site.key in REVIEWED_SQL:
            sql = statement_of(site)
            if sql is not None:
                assert statement_kind(sql) == REVIEWED_SQL[site.key][0], site
            if REVIEWED_SQL[site.key][0] == "ddl":
                assert "/migrations/" in site.path, site  # the schema changes in migrations only


def test_a_row_lock_taken_by_hand_is_on_a_select_constant():
    for site in _all_sites():
        if site.call == "locked" and site.path != HELPER:
            sql = statement_of(site)
            assert sql is not None and sql.split()[0].upper() == "SELECT", site


def test_only_the_known_modules_write_rows_by_hand():
    assert {s.path for s in _all_sites() if s.call == "insert"} == {"conversations/services/turns/session_rows.py"}


def test_the_hand_written_updates_are_found():
    assert sorted((m.__name__, sorted(c)) for m, c in _hand_written_updates()) == [
        ("Message", ["status"]),
        ("Session", ["context_enrichment_count", "updated_at"]),
    ]


UNREVIEWED_SOURCES = {
    "lower case": 'def f(cursor):\n    cursor.execute("insert into t (a) values (1)")\n',
    "concatenated": 'def f(c, table):\n    c.execute("UPDATE " + table + " SET a = 1")\n',
    "executemany": "def f(cursor, rows):\n    cursor.executemany(SQL, rows)\n",
    "delete": "class Repo:\n    def purge(self, cursor):\n        cursor.execute(f'DELETE FROM {T}')\n",
    "manager raw": 'def f():\n    return Message.objects.raw("select * from m")\n',
    "RawSQL": 'def f(qs):\n    return qs.annotate(n=RawSQL("select 1", []))\n',
    "RunSQL": 'operations = [migrations.RunSQL("DROP TABLE t")]\n',
}


@pytest.mark.parametrize("source", UNREVIEWED_SOURCES.values(), ids=UNREVIEWED_SOURCES.keys())
def test_the_scan_sees_a_statement_however_it_is_written(source):
    (site,) = sql_sites("x/module.py", source)
    assert site.call not in _HELPERS and site.key not in REVIEWED_SQL


def test_the_scan_sees_the_helper_under_any_name_and_skips_a_redis_pipeline():
    source = (
        "from common.raw_select import insert as put, locked\n"
        "from common import raw_select as rs\n"
        "def f(m, cursor, pipe):\n"
        "    put(m, along=(SEED, [1]))\n"
        "    cursor.execute(locked(Q), [1])\n"
        "    rs.insert(m)\n"
        "    pipe.execute()\n"
    )
    assert [(s.function, s.call, s.sql) for s in sql_sites("x/module.py", source)] == [
        ("f", "insert", "SEED"),
        ("f", "locked", "Q"),
        ("f", "insert", ""),
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
