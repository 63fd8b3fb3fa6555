"""The few framework internals HeyAira still needs, each because no public API does the job in
the versions pinned in requirements.txt. Nothing else reaches into Django or psycopg_pool:
tests/core/test_framework_internals.py names the versions this was written against and fails on
another, so that an upgrade looks at each use below again (and deletes those it makes public).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.admin import ModelAdmin
from django.db import models
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]
from django.db.models.sql import UpdateQuery
from django.http import HttpRequest, HttpResponse

WRITTEN_FOR = {"django": (5, 2), "psycopg_pool": (3, 3)}


def set_pool_check(pool: Any, check: Callable[[Any], None]) -> None:
    """Make `check` the `check` callback of a pool Django built. Django 5.2 passes its own
    (`ConnectionPool.check_connection`, or None) to psycopg_pool's constructor and refuses a
    `check` in OPTIONS["pool"] (Django ticket 37075, public from a later Django: then put the
    check in OPTIONS["pool"] and delete this)."""
    pool._check = check


def pool_check(pool: Any) -> Callable[[Any], None] | None:
    """The `check` callback `pool` runs before handing out a connection."""
    check: Callable[[Any], None] | None = pool._check
    return check


def change_view_outside_transaction(
    admin: ModelAdmin[Any],
    request: HttpRequest,
    object_id: str | None,
    form_url: str,
    extra_context: dict[str, Any] | None,
) -> HttpResponse:
    """The admin's add/change view without the transaction Django's `changeform_view` wraps
    around every hook of a POST (get_form, save_model, response_add...): HeyAira's services run
    from the form's clean() in their own durable transaction, which may not nest in another."""
    response: HttpResponse = admin._changeform_view(  # type: ignore[attr-defined]
        request, object_id, form_url, extra_context
    )
    return response


def delete_view_outside_transaction(
    admin: ModelAdmin[Any],
    request: HttpRequest,
    object_id: str,
    extra_context: dict[str, Any] | None,
) -> HttpResponse:
    """The admin's delete view without Django's transaction around it (as above)."""
    response: HttpResponse = admin._delete_view(  # type: ignore[attr-defined]
        request, object_id, extra_context
    )
    return response


# core.statements: the hot path's statements, compiled once and run on a server-binding cursor.


def server_binding_cursor(connection: Any) -> Any:
    """What Django's `cursor()` does on PostgreSQL, with the cursor class Django uses under
    OPTIONS["server_side_binding"]: that option would bind (and so prepare) every query of the
    process, the admin's and the web UI's too, where only the hot path's statements should."""
    from django.db.backends.postgresql.base import (  # type: ignore[attr-defined]
        TIMESTAMPTZ_OID,
        ServerBindingCursor,
    )
    from django.db.backends.postgresql.psycopg_any import (  # type: ignore[import-untyped]
        register_tzloader,
    )
    from psycopg.pq import Format

    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        cursor = ServerBindingCursor(connection.connection)
        loader = connection.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
        if connection.timezone != loader.timezone:
            register_tzloader(connection.timezone, cursor)
        return connection._prepare_cursor(cursor)


class CompiledQuery:
    """A queryset's SQL and parameters as the ORM compiles them, and the ORM's way of building
    its model instance from one row (converters, select_related objects, annotations): the
    query runs many times with new values and is compiled once."""

    def __init__(self, query: Any, using: str) -> None:
        compiler = query.get_compiler(using)
        self.sql, self.params = compiler.as_sql()
        self.compiler = compiler
        info = compiler.klass_info
        self.model = info["model"]
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        self.span = (start, end)
        self.init_list = [column[0].target.attname for column in compiler.select[start:end]]
        self.annotations = dict(compiler.annotation_col_map or {})
        self.populators = (info, compiler.select)

    def instance(self, using: str, rows: list[Any]) -> Any:
        """ModelIterable's work for the first of `rows`."""
        row = next(iter(self.compiler.results_iter(results=[rows])))
        start, end = self.span
        obj = self.model.from_db(using, self.init_list, row[start:end])
        for populator in get_related_populators(*self.populators, using):
            populator.populate(row, obj)
        for name, position in self.annotations.items():
            setattr(obj, name, row[position])
        return obj


def compile_for_update(
    model: type[models.Model], using: str, expressions: dict[str, Any]
) -> tuple[list[str], str, tuple[Any, ...]]:
    """(names, SQL, parameters) of `expressions` resolved against an UPDATE of `model`, whose
    base alias is the table's name: to append to the UPDATE's RETURNING."""
    query = UpdateQuery(model)
    compiler = query.get_compiler(using)
    names, parts, params = [], [], []
    for name, expression in expressions.items():
        sql, more = compiler.compile(expression.resolve_expression(query))
        names.append(name)
        parts.append(sql)
        params.extend(more)
    return names, ", ".join(parts), tuple(params)


def converted_row(model: type[models.Model], connection: Any, values: Any) -> list[Any]:
    """A row of `model`'s concrete columns as the ORM's SELECT converts them: the backend's
    converters, then the field's."""
    table = model._meta.db_table
    converted = []
    for field, value in zip(model._meta.concrete_fields, values, strict=False):
        column = field.get_col(table)
        for convert in connection.ops.get_db_converters(column) + column.get_db_converters(
            connection
        ):
            value = convert(value, column, connection)
        converted.append(value)
    return converted
