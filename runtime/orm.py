"""Running ORM work from the async MCP transport."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.db import DatabaseError, close_old_connections

from audit.recorder import flush_pending, unit_started
from core import database

P = ParamSpec("P")
R = TypeVar("R")


async def run_orm(function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run sync ORM code on the database executor, framed like a Django request.

    Requests to /mcp never pass through Django's handler, so nothing else closes connections
    that are broken or past CONN_MAX_AGE; doing it around each unit returns pooled connections
    and discards dead ones. Every unit is self-contained (one service call, one transaction), so
    units run in parallel, at most as many as the executor has threads (core.database).
    A database fault comes out as core.errors.Unavailable.
    """

    def framed() -> R:
        close_old_connections()
        database.purge_dead_connections()  # only after a connection fault
        unit_started()
        answered = True
        try:
            return function(*args, **kwargs)
        except Exception as error:
            answered = database.unavailable_from(error) is None
            raise
        finally:
            if answered:
                flush_pending()  # the database is back: write the audit rows that waited
            database.drop_connection()

    try:
        return await database.executor().run(framed)
    except DatabaseError as error:
        unavailable = database.unavailable_from(error)
        if unavailable is None:
            raise
        raise unavailable from error
