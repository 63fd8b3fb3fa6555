"""Writes in one statement where the ORM would take two or three.

- `update_returning`: UPDATE ... RETURNING the row, instead of an UPDATE and a second SELECT to
  read what was written (the compare-and-set of task_update).
- `insert_unless_taken`: INSERT ... ON CONFLICT DO NOTHING, instead of a savepoint, the INSERT
  and a release around a unique violation that is expected (an idempotency key used before, a
  version another writer took first). A conflict aborts nothing, so no savepoint is needed.

PostgreSQL and SQLite (3.35 and later) support both. They build on the ORM's own query
compilers, so values are prepared and converted exactly as the ORM does it.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from django.db import connections, models, router
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery, UpdateQuery

M = TypeVar("M", bound=models.Model)


def update_returning(rows: models.QuerySet[M], **values: Any) -> M | None:
    """Apply `values` to the one row `rows` matches and return it as it is now; None when no
    row matched. `rows` filters on its own table only (a pk, a version, a status)."""
    if sum(1 for count in rows.query.alias_refcount.values() if count) > 1:
        raise ValueError("update_returning takes filters on the model's own table only")
    using = router.db_for_write(rows.model)
    query = cast(UpdateQuery, rows.query.chain(UpdateQuery))
    query.add_update_values(values)
    connection = connections[using]
    statement, params = query.get_compiler(using).as_sql()
    fields = rows.model._meta.concrete_fields
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    with connection.cursor() as cursor:
        cursor.execute(f"{statement} RETURNING {columns}", params)
        found = cursor.fetchall()
    if not found:
        return None
    if len(found) > 1:
        raise ValueError("update_returning updated more than one row")
    table = rows.model._meta.db_table
    converted = []
    for field, value in zip(fields, found[0], strict=True):
        column = field.get_col(table)
        # What the ORM's own SELECT applies: the backend's converters, then the field's.
        for convert in connection.ops.get_db_converters(column) + column.get_db_converters(
            connection
        ):
            value = convert(value, column, connection)
        converted.append(value)
    return rows.model.from_db(using, [field.attname for field in fields], converted)


def insert_unless_taken(row: models.Model) -> bool:
    """Insert `row` unless a unique constraint already holds its values; whether it was
    inserted. A concurrent insert of the same values waits for that transaction, as a plain
    INSERT would, and then counts as taken once it commits."""
    model = type(row)
    using = router.db_for_write(model)
    fields = [field for field in model._meta.concrete_fields if not field.generated]
    query = InsertQuery(model, on_conflict=OnConflict.IGNORE)
    query.insert_values(fields, [row])
    with connections[using].cursor() as cursor:
        inserted = 0
        for statement, params in query.get_compiler(using).as_sql():
            cursor.execute(statement, params)
            inserted += cursor.rowcount
    row._state.adding = False
    row._state.db = using
    return inserted == 1
