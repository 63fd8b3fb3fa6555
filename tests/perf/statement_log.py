"""The statements a block sends, as their SQL text: Django's execute_wrapper sees each one as
given to the cursor. CaptureQueriesContext reads it back from the driver instead, which gives
None for a statement psycopg ran prepared on a server-binding cursor (core.statements)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper


@contextmanager
def statements_sent(connection: BaseDatabaseWrapper) -> Iterator[list[str]]:
    sent: list[str] = []

    def record(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield sent
