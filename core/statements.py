"""Fewer statements, and less Python per statement, where a request's hot path needs it.

- `CompiledSelect`: a query whose shape never changes (authentication's), compiled by the ORM
  once per thread and then run with new values: compiling a select_related query with a
  subquery costs more CPU than PostgreSQL spends answering it.
- `update_returning`: UPDATE ... RETURNING the row, instead of an UPDATE and a second SELECT to
  read what was written (the compare-and-set of task_update); with `Returning`, values the row
  alone does not hold (its readiness, from other rows) come back in the same statement.
- `insert_unless_taken`: INSERT ... ON CONFLICT DO NOTHING, instead of a savepoint, the INSERT
  and a release around a unique violation that is expected (an idempotency key used before, a
  version another writer took first). A conflict aborts nothing, so no savepoint is needed.

PostgreSQL and SQLite (3.35 and later) support both. They build on the ORM's own query
compilers, so values are prepared and converted exactly as the ORM does it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from django.db import connections, models, router
from django.db.models.constants import OnConflict
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]
from django.db.models.sql import InsertQuery, UpdateQuery

M = TypeVar("M", bound=models.Model)


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
        params = [values[slot] if slot else fixed for slot, fixed in compiled.params]
        with connections[using].cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchmany(1)
        if not rows:
            return None
        return compiled.instance(using, rows)

    def _compiled(self, using: str) -> _Compiled:
        cache: dict[str, _Compiled] = self._local.__dict__.setdefault("cache", {})
        if using not in cache:
            placeholders = {name: f"\x00{name}\x00" for name in self.names}
            query = self.build(**placeholders).query
            cache[using] = _Compiled(query.get_compiler(using), placeholders)
        return cache[using]


class _Compiled:
    def __init__(self, compiler: Any, placeholders: dict[str, str]) -> None:
        self.sql, fixed = compiler.as_sql()
        slots = {value: name for name, value in placeholders.items()}
        self.params = [
            (slots.get(value) if isinstance(value, str) else None, value) for value in fixed
        ]
        if sorted(slot for slot, _ in self.params if slot) != sorted(placeholders):
            raise ValueError("each placeholder must appear exactly once in the query")
        self.compiler = compiler
        info = compiler.klass_info
        self.model = info["model"]
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        self.span = (start, end)
        self.init_list = [column[0].target.attname for column in compiler.select[start:end]]
        self.annotations = dict(compiler.annotation_col_map or {})
        self.populators = (info, compiler.select)

    def instance(self, using: str, rows: list[Any]) -> Any:
        """ModelIterable's work for one row: converters, the model, its related objects."""
        row = next(iter(self.compiler.results_iter(results=[rows])))
        start, end = self.span
        obj = self.model.from_db(using, self.init_list, row[start:end])
        for populator in get_related_populators(*self.populators, using):
            populator.populate(row, obj)
        for name, position in self.annotations.items():
            setattr(obj, name, row[position])
        return obj


class Returning:
    """Expressions returned by update_returning beside the row's columns, set on the instance
    under their names: subqueries correlated with the updated row, evaluated on its new values.
    Their SQL never changes, so it is compiled once per database: resolving and compiling a
    subquery costs more CPU than the database spends on it."""

    def __init__(self, build: Callable[[], dict[str, Any]]) -> None:
        self.build = build
        self._compiled: dict[tuple[str, str], tuple[list[str], str, tuple[Any, ...]]] = {}

    def compiled(
        self, query: UpdateQuery, compiler: Any, table: str
    ) -> tuple[list[str], str, tuple[Any, ...]]:
        """(names, SQL to append to RETURNING, its parameters) for `query` on `table`."""
        key = (compiler.using, table)
        if key not in self._compiled:
            names, parts, params = [], [], []
            for name, expression in self.build().items():
                sql, more = compiler.compile(expression.resolve_expression(query))
                names.append(name)
                parts.append(sql)
                params.extend(more)
            self._compiled[key] = (names, ", ".join(parts), tuple(params))
        return self._compiled[key]


def update_returning(
    rows: models.QuerySet[M], *, returning: Returning | None = None, **values: Any
) -> M | None:
    """Apply `values` to the one row `rows` matches and return it as it is now; None when no
    row matched. `rows` filters on its own table only (a pk, a version, a status)."""
    if sum(1 for count in rows.query.alias_refcount.values() if count) > 1:
        raise ValueError("update_returning takes filters on the model's own table only")
    using = router.db_for_write(rows.model)
    query = cast(UpdateQuery, rows.query.chain(UpdateQuery))
    query.add_update_values(values)
    connection = connections[using]
    compiler = query.get_compiler(using)
    statement, params = compiler.as_sql()
    fields = rows.model._meta.concrete_fields
    table = rows.model._meta.db_table
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    names: list[str] = []
    if returning is not None:
        names, extra, extra_params = returning.compiled(query, compiler, table)
        columns, params = f"{columns}, {extra}", (*params, *extra_params)
    with connection.cursor() as cursor:
        cursor.execute(f"{statement} RETURNING {columns}", params)
        found = cursor.fetchall()
    if not found:
        return None
    if len(found) > 1:
        raise ValueError("update_returning updated more than one row")
    converted = []
    for field, value in zip(fields, found[0], strict=False):
        column = field.get_col(table)
        # What the ORM's own SELECT applies: the backend's converters, then the field's.
        for convert in connection.ops.get_db_converters(column) + column.get_db_converters(
            connection
        ):
            value = convert(value, column, connection)
        converted.append(value)
    instance = rows.model.from_db(using, [field.attname for field in fields], converted)
    for name, value in zip(names, found[0][len(fields) :], strict=True):
        setattr(instance, name, value)
    return instance


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
