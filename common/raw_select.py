"""Hot one-row reads written once per process instead of compiled by the ORM on every request.

The ORM builds a statement's SQL anew on every call; for a ``select_related`` read that is
most of a millisecond of CPU, on statements every API request or agent turn runs. These
helpers write the column list from the models' fields once and turn a row back into model
instances the way the ORM would (``Model.from_db``, each field's ``from_db_value``), so the
callers keep working with models. Only for statements pinned by a query-count test.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections


def columns(model) -> tuple[list[str], str]:
    """The model's field names (attnames) and its quoted column list, table-qualified."""
    table = model._meta.db_table
    fields = model._meta.concrete_fields
    return [f.attname for f in fields], ", ".join(f'"{table}"."{f.column}"' for f in fields)


def row_instances(row, models: list, alias: str = DEFAULT_DB_ALIAS) -> list:
    """Split a row selected with ``columns(m)`` for each model, in order, into instances;
    a part whose primary key is NULL (an outer join that found nothing) becomes None."""
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
        for i, field in enumerate(fields):
            if values[i] is not None and hasattr(field, "from_db_value"):
                values[i] = field.from_db_value(values[i], None, connection)
        instances.append(model.from_db(alias, [f.attname for f in fields], values))
    return instances
