"""The real ASGI application in this process, for tests that send many raw requests to /mcp.

`InProcessServer` runs `HeyAiraApplication` (the object uvicorn serves) with its lifespan
entered, on an event loop in a background thread, and `send` hands it one request through an
`httpx2.ASGITransport`: no sockets, no subprocess, so a few hundred requests take seconds, and
synchronous code (a hypothesis test) can drive it. The ORM work runs in worker threads exactly
as in production (`runtime.orm.run_orm`), so tests need the `transactional_db` fixture
(data committed, visible to those threads).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal

from heyaira.asgi import HeyAiraApplication
from tests.continuity.mcp.fuzzing import Answer, FuzzRequest

BASE_URL = "http://testserver"  # HEYAIRA_PUBLIC_URL in tests (tests/environment.py)
HOST = "testserver"


class InProcessServer:
    def __init__(self, portal: BlockingPortal, http: httpx2.AsyncClient) -> None:
        self.portal = portal
        self.http = http

    def send(self, request: FuzzRequest) -> Answer:
        return self.portal.call(self._send, request)

    def post(self, message: Any, headers: dict[str, str]) -> httpx2.Response:
        return self.portal.call(
            lambda: self.http.post("/mcp", content=json.dumps(message).encode(), headers=headers)
        )

    def post_many(
        self, message: Any, headers: dict[str, str], count: int, concurrency: int
    ) -> list[int]:
        """`count` copies of one request, at most `concurrency` in flight at once, as many
        clients send them; the status of each."""
        return list(self.portal.call(self._post_many, message, headers, count, concurrency))

    async def _post_many(
        self, message: Any, headers: dict[str, str], count: int, concurrency: int
    ) -> list[int]:
        body = json.dumps(message).encode()
        statuses: list[int] = []
        remaining = iter(range(count))

        async def client() -> None:
            for _ in remaining:  # one shared iterator: `count` requests in all
                response = await self.http.post("/mcp", content=body, headers=headers)
                statuses.append(response.status_code)

        async with anyio.create_task_group() as group:
            for _ in range(concurrency):
                group.start_soon(client)
        return statuses

    async def _send(self, request: FuzzRequest) -> Answer:
        built = self.http.build_request(
            request.method, "/mcp", content=request.body, headers=list(request.headers)
        )
        sent = {name.lower() for name, _ in request.headers}
        for default in (b"accept", b"accept-encoding", b"user-agent"):
            # httpx adds these by default; a fuzzed request has exactly the headers it names.
            if default not in sent and default.decode() in built.headers:
                del built.headers[default.decode()]
        response = await self.http.send(built)
        return Answer(
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body=response.content,
        )


@contextmanager
def in_process_server() -> Iterator[InProcessServer]:
    """A fresh application (its own session manager, as each worker has) for one test."""
    app = HeyAiraApplication()
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(app.manager.run()):
        transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 40000))
        http = httpx2.AsyncClient(transport=transport, base_url=BASE_URL, timeout=30)
        try:
            yield InProcessServer(portal, http)
        finally:
            portal.call(http.aclose)
