"""Fewer statements, and less Python per statement, where a request's hot path needs it.

- `CompiledSelect`: a query whose shape never changes (authentication's), compiled by the ORM
  once per thread and then run with new values: compiling a select_related query with a
  subquery costs more CPU than PostgreSQL spends answering it.
- `update_returning`: UPDATE ... RETURNING the row, instead of an UPDATE and a second SELECT to
  read what was written (the compare-and-set of task_update); with `Returning`, values the row
  alone does not hold (its readiness, from other rows) come back in the same statement.
- `insert_row`: the INSERT of `save(force_insert=True)` with its SQL built once per model and
  database: the ORM builds an InsertQuery and compiles it for every row (the work receipt and
  the audit row of each write).
- `insert_unless_taken`: INSERT ... ON CONFLICT DO NOTHING, instead of a savepoint, the INSERT
  and a release around a unique violation that is expected (an idempotency key used before, a
  version another writer took first). A conflict aborts nothing, so no savepoint is needed.

PostgreSQL and SQLite (3.35 and later) support both. They build on the ORM's own query
compilers, so values are prepared and converted exactly as the ORM does it; what of Django's
internals that takes is in core.framework_internals, and this module uses public API only.

On PostgreSQL they run on a cursor that sends the values apart from the statement's text
(`bound_cursor`): Django's own cursors quote every value into the text on the client, which
cost more CPU than anything else psycopg does for these statements, and a statement whose
text never changes can then stay prepared on its connection (psycopg prepares it from its
fifth run). Through PgBouncer they go as Django's do (heyaira.envconfig, runtime.pgbouncer).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import connections, models, router

from core.framework_internals import (
    CompiledQuery,
    compile_for_update,
    converted_row,
    server_binding_cursor,
)

M = TypeVar("M", bound=models.Model)
R = TypeVar("R")


def bound_cursor(connection: Any) -> Any:
    """A cursor of `connection` (Django's wrapper: statement capture, error translation) that
    binds values on the server on PostgreSQL when its statements may be prepared; Django's usual
    cursor elsewhere. Through PgBouncer (prepare_threshold None: heyaira.envconfig) each statement
    goes out behind its SET LOCAL settings in one message, which only the simple protocol that
    Django's cursor uses allows."""
    if connection.vendor != "postgresql" or not connection.settings_dict["OPTIONS"].get(
        "prepare_threshold"
    ):
        return connection.cursor()
    return server_binding_cursor(connection)


class CompiledSelect(Generic[M]):
    """`build(**placeholders)`'s SQL, compiled once per thread and database, then run with new
    values for the placeholders; its first row as the ORM would build it (select_related
    objects and annotations included). The values must be strings (what they filter on is
    compared as given: no field prepares them)."""

    def __init__(self, build: Callable[..., models.QuerySet[M]], *names: str) -> None:
        self.build = build
        self.names = names
        self._local = threading.local()

    def first(self, using: str, **values: str) -> M | None:
        compiled = self._compiled(using)
        params = [values[slot] if slot else fixed for slot, fixed in compiled.slots]
        with bound_cursor(connections[using]) as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchmany(1)
        if not rows:
            return None
        return compiled.instance(using, rows)

    def _compiled(self, using: str) -> _Compiled:
        cache: dict[str, _Compiled] = self._local.__dict__.setdefault("cache", {})
        if using not in cache:
            placeholders = {name: f"\x00{name}\x00" for name in self.names}
            cache[using] = _Compiled(self.build(**placeholders).query, using, placeholders)
        return cache[using]


class _Compiled(CompiledQuery):
    """The query compiled with a placeholder string where each value goes."""

    def __init__(self, query: Any, using: str, placeholders: dict[str, str]) -> None:
        super().__init__(query, using)
        slots = {value: name for name, value in placeholders.items()}
        self.slots = [
            (slots.get(value) if isinstance(value, str) else None, value) for value in self.params
        ]
        if sorted(slot for slot, _ in self.slots if slot) != sorted(placeholders):
            raise ValueError("each placeholder must appear exactly once in the query")


class Returning:
    """Expressions returned by update_returning beside the row's columns, set on the instance
    under their names: subqueries correlated with the updated row, evaluated on its new values.
    Their SQL never changes, so it is compiled once per database: resolving and compiling a
    subquery costs more CPU than the database spends on it."""

    def __init__(self, build: Callable[[], dict[str, Any]]) -> None:
        self.build = build
        self._compiled: dict[tuple[type[models.Model], str], _Extra] = {}

    def compiled(self, model: type[models.Model], using: str) -> _Extra:
        """(names, SQL to append to RETURNING, its parameters) for an UPDATE of `model`."""
        key = (model, using)
        if key not in self._compiled:
            self._compiled[key] = compile_for_update(model, using, self.build())
        return self._compiled[key]


@dataclass(frozen=True)
class Guard:
    """A further condition of an UPDATE's WHERE, in SQL over the row's own columns (fixed text:
    part of the statement's shape), with its parameters as (column, value) pairs, each value
    prepared by that column's field."""

    sql: str
    params: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class When:
    """A value an UPDATE sets only in a row where `condition` (fixed SQL over the row's own
    columns) holds; elsewhere the column keeps its value."""

    condition: str
    value: Any


_Extra = tuple[list[str], str, tuple[Any, ...]]
_UPDATES: dict[tuple[Any, ...], str] = {}


def update_returning(
    model: type[M],
    *,
    where: dict[str, Any],
    values: dict[str, Any],
    increment: tuple[str, ...] = (),
    returning: Returning | None = None,
    guard: Guard | None = None,
) -> M | None:
    """UPDATE the one row of `model` that `where` matches and return it as it is now; None
    when no row matched. `where` maps a field's attname to a value (equal) or a list (one of);
    `values` are set, the fields of `increment` go up by one. The statement's text is built
    once per shape (which fields, how many listed values): building and compiling an UPDATE
    through the ORM for every request cost more CPU than PostgreSQL spends running it. Values
    are prepared by their fields as the ORM prepares them."""
    extra: _Extra = returning.compiled(model, using_for(model)) if returning else ([], "", ())
    found = _update(
        model, where, values, increment, returning, extra, lambda c: c.fetchall(), guard
    )
    if not found:
        return None
    if len(found) > 1:
        raise ValueError("update_returning updated more than one row")
    using = using_for(model)
    fields = model._meta.concrete_fields
    converted = converted_row(model, connections[using], found[0])
    instance = model.from_db(using, [field.attname for field in fields], converted)
    for name, value in zip(extra[0], found[0][len(fields) :], strict=True):
        setattr(instance, name, value)
    return instance


def update_rows(model: type[models.Model], *, where: dict[str, Any], values: dict[str, Any]) -> int:
    """update_returning without the row: how many rows were updated."""
    return int(_update(model, where, values, (), None, None, lambda cursor: cursor.rowcount))


def using_for(model: type[models.Model]) -> str:
    return router.db_for_write(model)


def _update(
    model: type[models.Model],
    where: dict[str, Any],
    values: dict[str, Any],
    increment: tuple[str, ...],
    returning: Returning | None,
    extra: _Extra | None,
    read: Callable[[Any], R],
    guard: Guard | None = None,
) -> R:
    """Run the UPDATE (its text built once per shape); what `read` reads off its cursor."""
    using = using_for(model)
    connection = connections[using]
    shape = (
        model,
        using,
        tuple((name, len(each) if isinstance(each, list) else -1) for name, each in where.items()),
        tuple((name, v.condition if isinstance(v, When) else None) for name, v in values.items()),
        increment,
        returning,
        extra is not None,
        guard.sql if guard else None,
    )
    if shape not in _UPDATES:
        returned = None if extra is None else extra[1]
        _UPDATES[shape] = _update_statement(
            model, connection, where, values, increment, returned, guard
        )
    params = _update_params(model, connection, where, values, guard)
    if extra is not None:
        params.extend(extra[2])
    with bound_cursor(connection) as cursor:
        cursor.execute(_UPDATES[shape], params)
        return read(cursor)


def _update_params(
    model: type[models.Model],
    connection: Any,
    where: dict[str, Any],
    values: dict[str, Any],
    guard: Guard | None,
) -> list[Any]:
    """The UPDATE's parameters in its text's order: SET values, WHERE values, the guard's."""
    params: list[Any] = []
    for name, value in values.items():
        given = value.value if isinstance(value, When) else value
        params.append(_column(model, name).get_db_prep_save(given, connection))
    for name, value in where.items():
        field = _column(model, name)
        for each in value if isinstance(value, list) else [value]:
            params.append(field.get_db_prep_value(each, connection, prepared=False))
    for name, value in guard.params if guard else ():
        params.append(_column(model, name).get_db_prep_value(value, connection, prepared=False))
    return params


def _column(model: type[models.Model], name: str) -> Any:
    """The concrete field named `name` (or with that attname, as project_id)."""
    for field in model._meta.concrete_fields:
        if name in (field.name, field.attname):
            return field
    raise ValueError(f"{model.__name__} has no column {name}")


def _update_statement(
    model: type[models.Model],
    connection: Any,
    where: dict[str, Any],
    values: dict[str, Any],
    increment: tuple[str, ...],
    extra: str | None,
    guard: Guard | None = None,
) -> str:
    quote = connection.ops.quote_name
    meta = model._meta
    sets = []
    for name, value in values.items():
        column = quote(_column(model, name).column)
        if isinstance(value, When):
            sets.append(f"{column} = CASE WHEN {value.condition} THEN %s ELSE {column} END")
        else:
            sets.append(f"{column} = %s")
    for name in increment:
        column = quote(_column(model, name).column)
        sets.append(f"{column} = ({column} + 1)")
    conditions = []
    for name, value in where.items():
        column = quote(_column(model, name).column)
        if isinstance(value, list):
            if not value:
                raise ValueError(f"update_returning: no values for {name}")
            conditions.append(f"{column} IN ({', '.join(['%s'] * len(value))})")
        else:
            conditions.append(f"{column} = %s")
    if guard is not None:
        conditions.append(guard.sql)
    # Quoted names from the model and placeholders only: no value is in the text.
    statement = f"UPDATE {quote(meta.db_table)} SET {', '.join(sets)} "  # noqa: S608
    statement += f"WHERE {' AND '.join(conditions)}"
    if extra is None:  # update_rows: nothing returned
        return statement
    returned = ", ".join(quote(field.column) for field in meta.concrete_fields)
    return f"{statement} RETURNING {', '.join(filter(None, [returned, extra]))}"


_INSERTS: dict[tuple[type[models.Model], str, bool], tuple[str, list[models.Field[Any, Any]]]] = {}


def insert_row(row: models.Model, *, unless_taken: bool = False) -> bool:
    """INSERT a new `row`, field values prepared exactly as `save(force_insert=True)` prepares
    them (pre_save for auto_now_add, get_db_prep_save), without the model signals; whether it
    was inserted. For models whose primary key is set in Python (a default): nothing is read
    back. unless_taken: ON CONFLICT DO NOTHING (see insert_unless_taken)."""
    model = type(row)
    using = router.db_for_write(model)
    connection = connections[using]
    key = (model, using, unless_taken)
    if key not in _INSERTS:
        _INSERTS[key] = _insert_statement(model, connection, unless_taken)
    statement, fields = _INSERTS[key]
    params = [field.get_db_prep_save(field.pre_save(row, True), connection) for field in fields]
    with bound_cursor(connection) as cursor:
        cursor.execute(statement, params)
        inserted = cursor.rowcount == 1
    row._state.adding = False
    row._state.db = using
    return inserted


def _insert_statement(
    model: type[models.Model], connection: Any, unless_taken: bool
) -> tuple[str, list[models.Field[Any, Any]]]:
    pk = model._meta.pk
    if pk is None or pk.default is models.NOT_PROVIDED:
        raise ValueError(f"insert_row needs a primary key set in Python ({model.__name__})")
    fields = [field for field in model._meta.concrete_fields if not field.generated]
    for field in fields:
        if hasattr(field, "get_placeholder") or field.db_default is not models.NOT_PROVIDED:
            raise ValueError(f"insert_row cannot insert {model.__name__}.{field.name}")
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    values = ", ".join(["%s"] * len(fields))
    # Quoted names from the model and placeholders only: no value is in the text. PostgreSQL
    # and SQLite (3.24 and later) both skip a row that breaks a unique constraint this way.
    statement = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({values})"  # noqa: S608
    return statement + (" ON CONFLICT DO NOTHING" if unless_taken else ""), fields


def insert_unless_taken(row: models.Model) -> bool:
    """Insert `row` unless a unique constraint already holds its values; whether it was
    inserted. A concurrent insert of the same values waits for that transaction, as a plain
    INSERT would, and then counts as taken once it commits."""
    return insert_row(row, unless_taken=True)
