"""Hot one-row reads written once per process instead of compiled by the ORM on every request.

The ORM builds a statement's SQL anew on every call; for a ``select_related`` read that is
most of a millisecond of CPU, on statements every API request or agent turn runs. These
helpers write the column list from the models' fields once and turn a row back into model
instances the way the ORM would (``Model.from_db``, each field's ``from_db_value``), so the
callers keep working with models. Only for statements pinned by a query-count test.
"""

from __future__ import annotations

from collections.abc import Collection

from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, models
from django.db.models import signals
from django.db.transaction import TransactionManagementError


def columns(model) -> tuple[list[str], str]:
    """The model's field names (attnames) and its quoted column list, table-qualified."""
    table = model._meta.db_table
    fields = model._meta.concrete_fields
    return [f.attname for f in fields], ", ".join(f'"{table}"."{f.column}"' for f in fields)


_converters: dict[tuple[type, str], list[list]] = {}


def _field_converters(model, connection) -> list[list]:
    """Per concrete field, the converters the ORM applies to a fetched value: the backend's
    (SQLite turns its text datetimes into aware ones, booleans, decimals …) then the field's
    own ``from_db_value``; computed once per model and connection."""
    key = (model, connection.alias)
    found = _converters.get(key)
    if found is None:
        found = []
        for field in model._meta.concrete_fields:
            col = field.get_col(model._meta.db_table)
            found.append(
                [(fn, col) for fn in connection.ops.get_db_converters(col) + field.get_db_converters(connection)]
            )
        _converters[key] = found
    return found


def row_instances(row, models: list, alias: str = DEFAULT_DB_ALIAS) -> list:
    """Split a row selected with ``columns(m)`` for each model, in order, into instances;
    a part whose primary key is NULL (an outer join that found nothing) becomes None.
    Values pass through the same converters as the ORM's (``_field_converters``)."""
    connection = connections[alias]
    instances, start = [], 0
    for model in models:
        fields = model._meta.concrete_fields
        values = list(row[start : start + len(fields)])
        start += len(fields)
        pk_index = fields.index(model._meta.pk)
        if values[pk_index] is None:
            instances.append(None)
            continue
        for i, converters in enumerate(_field_converters(model, connection)):
            for fn, col in converters:
                values[i] = fn(values[i], col, connection)
        instances.append(model.from_db(alias, [f.attname for f in fields], values))
    return instances


def write_hazards(
    model, *, updated_columns: Collection[str] | None = None, handled_defaults: Collection[str] | None = None
) -> list[str]:
    """What ``save()`` would do for ``model`` that a hand-written INSERT (``updated_columns`` None)
    or UPDATE of ``updated_columns`` skips: an overridden ``save()``, pre/post_save receivers, a
    database default (``insert`` names every column, so it never applies), an ``auto_now`` column
    the UPDATE leaves out, and, unless ``handled_defaults`` is None, a callable default not named
    in it (the hand-written code must have been checked to set it). Empty when none."""
    meta = model._meta
    found = []
    for cls in model.__mro__:
        if cls is models.Model:
            break
        for method in ("save", "save_base"):
            if method in vars(cls):
                found.append(f"{cls.__name__}.{method}() is overridden")
    for signal, name in ((signals.pre_save, "pre_save"), (signals.post_save, "post_save")):
        if signal.has_listeners(model):
            found.append(f"{name} has receivers")
    for field in meta.concrete_fields:
        if field.db_default is not models.NOT_PROVIDED:
            found.append(f"{field.name} has a db_default")
        if (
            handled_defaults is not None
            and field.has_default()
            and callable(field.default)
            and field.name not in handled_defaults
        ):
            found.append(f"{field.name} has a callable default")
        if updated_columns is not None and getattr(field, "auto_now", False) and field.column not in updated_columns:
            found.append(f"{field.name} is auto_now but the UPDATE leaves it out")
    return found


_insert_sql: dict[tuple[type, tuple[str, ...]], str] = {}


def _insert_statement(meta, fields) -> str:
    key = (meta.model, tuple(f.column for f in fields))
    sql = _insert_sql.get(key)
    if sql is None:
        hazards = write_hazards(meta.model)
        if hazards:
            raise ImproperlyConfigured(f"{meta.label} cannot be inserted by hand: {'; '.join(hazards)}")
        names = ", ".join('"%s"' % f.column for f in fields)
        placeholders = ", ".join(["%s"] * len(fields))
        sql = _insert_sql[key] = (
            f'INSERT INTO "{meta.db_table}" ({names}) VALUES ({placeholders}) '
            f'RETURNING "{meta.db_table}"."{meta.pk.column}"'
        )
    return sql


def insert(instance, alias: str = DEFAULT_DB_ALIAS, *, along: tuple[str, list] | None = None) -> None:
    """``instance.save()`` for a new row of a model with an auto primary key and no save
    signals or overridden ``save``: the same column values (each field's ``pre_save`` and
    ``get_db_prep_save``, so ``auto_now_add`` and JSON encoding apply), one
    ``INSERT ... RETURNING`` with its SQL written once per model. Defaults, callable or not, were
    applied by the model's constructor. A model that gained what this would skip
    (``write_hazards``) is refused when its statement is first written.

    ``along``: an ``UPDATE`` (SQL, parameters) that must change exactly one row, written in the
    same statement on PostgreSQL (a data-modifying ``WITH``: one round trip, not two) and run
    before the INSERT elsewhere; ``DatabaseError`` if it changed no row or several (inside the
    caller's transaction, which then leaves nothing behind; refused outside a transaction).
    """
    model = type(instance)
    meta = model._meta
    connection = connections[alias]
    fields = [f for f in meta.concrete_fields if f is not meta.pk]
    sql = _insert_statement(meta, fields)
    if along is not None and connection.get_autocommit():
        # In autocommit the INSERT would be committed before a failed UPDATE is noticed.
        raise TransactionManagementError("an INSERT along an UPDATE must run inside a transaction.")
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    with connection.cursor() as cursor:
        if along is None:
            cursor.execute(sql, values)
            instance.pk = cursor.fetchone()[0]
        elif connection.vendor == "postgresql":
            update, params = along
            cursor.execute(f"WITH along AS ({update} RETURNING 1) {sql}, (SELECT count(*) FROM along)", params + values)
            instance.pk, changed = cursor.fetchone()
            _expect_one_row(changed)
        else:
            update, params = along
            cursor.execute(update, params)
            _expect_one_row(cursor.rowcount)
            cursor.execute(sql, values)
            instance.pk = cursor.fetchone()[0]
    instance._state.adding = False
    instance._state.db = alias


def _expect_one_row(changed: int) -> None:
    if changed != 1:
        raise DatabaseError(f"expected one row, {changed} changed")


def locked(sql: str, *, of: str | None = None, alias: str = DEFAULT_DB_ALIAS) -> str:
    """``sql`` with the row lock the backend supports, as ``select_for_update`` writes it: PostgreSQL
    locks (``FOR UPDATE [OF ...]``); SQLite (the embedded default) has no row locks and locks the
    whole database for the write transaction instead, so the clause is left out.

    Raises outside a transaction, as ``select_for_update`` does: in autocommit the lock would be
    released as soon as the statement ends, and the caller's read-modify-write would race. Checked
    on every backend (SQLite's write lock needs the transaction just the same)."""
    connection = connections[alias]
    if connection.get_autocommit():
        raise TransactionManagementError("a row lock (FOR UPDATE) cannot be taken outside of a transaction.")
    features = connection.features
    if not features.has_select_for_update:
        return sql
    if of and features.has_select_for_update_of:
        return f'{sql} FOR UPDATE OF "{of}"'
    return f"{sql} FOR UPDATE"
