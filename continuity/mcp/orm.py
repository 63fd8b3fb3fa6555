"""Running ORM work from the async MCP transport."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections

P = ParamSpec("P")
R = TypeVar("R")


async def run_orm(function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run sync ORM code in a worker thread, framed like a Django request.

    Requests to /mcp never pass through Django's handler, so nothing else closes connections
    that are broken or past CONN_MAX_AGE; doing it around each unit keeps the worker threads'
    connections healthy (and, with CONN_MAX_AGE=0, closed). Not thread-sensitive: every unit
    is self-contained (one service call, one transaction), so units may run in parallel.
    """

    def framed() -> R:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return await sync_to_async(framed, thread_sensitive=False)()
