"""The real ASGI application in this process, for tests that send many raw requests to /mcp.

`serve_in_process(body)` runs `HeyAiraApplication` (the same object uvicorn serves) with its
lifespan entered, and hands `body` an `httpx2.AsyncClient` whose transport calls the application
directly: no sockets, no subprocess, so a few hundred requests take seconds. The ORM work runs
in worker threads exactly as in production (`continuity.mcp.orm.run_orm`), so the test needs
the `transactional_db` fixture (data committed, visible to those threads).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import httpx2

from heyaira.asgi import HeyAiraApplication

BASE_URL = "http://testserver"  # HEYAIRA_PUBLIC_URL in tests (tests/environment.py)
T = TypeVar("T")


def serve_in_process(
    body: Callable[[httpx2.AsyncClient], Awaitable[T]], *, timeout: float = 120
) -> T:
    """Run `body` against a fresh application (one session manager per run, as per worker)."""
    app = HeyAiraApplication()

    async def main() -> T:
        with anyio.fail_after(timeout):
            async with app.manager.run():
                transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 40000))
                async with httpx2.AsyncClient(
                    transport=transport, base_url=BASE_URL, timeout=30
                ) as http:
                    return await body(http)

    return anyio.run(main)
