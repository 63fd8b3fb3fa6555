"""The one ASGI application's routing: static files, /mcp, and Django for the rest."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from django.core.signals import request_finished

from heyaira.asgi import HeyAiraApplication


def request(app: HeyAiraApplication, method: str, path: str) -> tuple[int, bytes, dict]:
    sent: list[MutableMapping[str, Any]] = []
    finished = anyio.Event()
    asked = 0

    async def receive() -> dict[str, Any]:
        # The request once; then, like a server, a disconnect once the response is complete.
        nonlocal asked
        asked += 1
        if asked == 1:
            return {"type": "http.request", "body": b"", "more_body": False}
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            finished.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }

    async def serve() -> None:
        with anyio.fail_after(10):
            await app(scope, receive, send)

    anyio.run(serve)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], body, headers


@pytest.fixture
def app(settings, tmp_path: Path) -> HeyAiraApplication:
    (tmp_path / "admin").mkdir()
    (tmp_path / "admin" / "site.css").write_text("body { color: black; }")
    (tmp_path.parent / "secret.txt").write_text("not for the web")
    settings.STATIC_ROOT = tmp_path
    return HeyAiraApplication()


def test_it_serves_collected_static_files(app: HeyAiraApplication):
    status, body, headers = request(app, "GET", "/static/admin/site.css")
    assert status == 200
    assert body == b"body { color: black; }"
    assert headers["content-type"].startswith("text/css")


@pytest.mark.parametrize("path", ["/static/missing.css", "/static/../secret.txt", "/static/"])
def test_it_answers_404_for_what_is_not_a_collected_file(app: HeyAiraApplication, path: str):
    status, body, _ = request(app, "GET", path)
    assert status == 404
    assert b"not for the web" not in body


def test_it_refuses_to_post_to_static_files(app: HeyAiraApplication):
    status, _, _ = request(app, "POST", "/static/admin/site.css")
    assert status == 405


@pytest.mark.django_db
def test_it_hands_everything_else_to_django(app: HeyAiraApplication):
    status, body, headers = request(app, "GET", "/healthz")
    assert status == 200
    assert body == b'{"status": "ok"}'
    assert headers["X-Request-ID"]


@pytest.mark.django_db(transaction=True)
def test_the_rest_api_closes_each_response_with_request_finished(app: HeyAiraApplication):
    """The REST handler closes its responses itself: request_finished (closing the database
    connection, flushing audit rows) must go out once per request."""
    finished: list[object] = []

    def record(sender: object, **kwargs: Any) -> None:
        finished.append(sender)

    request_finished.connect(record)
    try:
        status, _, _ = request(app, "GET", "/api/v1/export")
    finally:
        request_finished.disconnect(record)
    assert status == 401
    assert len(finished) == 1
