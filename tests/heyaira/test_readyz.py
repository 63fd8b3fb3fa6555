"""/readyz says whether the database answers (docs/operating.md), in bounded time, while /healthz
stays liveness. With the database gone, /mcp and REST still answer in the contract's terms:
`unavailable` as a tool error or a JSON-RPC error (never a 5xx), 503 with Retry-After on REST,
and the refusals that could not be audited are logged when the process ends."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import httpx2
import pytest
from django.test import Client

from heyaira.views import READINESS_TIMEOUT_SECONDS
from scripts.continuity_protocol_smoke import forms_of
from tests.continuity.mcp.harness import PASSWORD, build_world
from tests.core.live_calls import ACCEPT, VERSION, call_tool
from tests.live import (
    LiveServer,
    maintenance_connection,
    start_live_server,
    stop_live_server,
)

# Generous: the point is "seconds, not the 10 s pool wait or a hang".
SLACK_SECONDS = 2.0


def test_it_is_ready_when_the_database_answers(db: None, client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready"}
    assert response["X-Request-ID"]


def test_it_refuses_other_methods(client: Client) -> None:
    assert client.post("/readyz").status_code == 405


@pytest.fixture
def server_losing_its_database(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    # A short pool wait, so that every refusal below comes within about a second.
    monkeypatch.setenv("DATABASE_POOL_TIMEOUT_MS", "1000")
    server, pg_name = start_live_server(tmp_path_factory.mktemp("readyz"), access_log=False)
    try:
        keys = build_world(server).keys
        yield server, keys
    finally:
        stop_live_server(server, pg_name)


def _timed_get(url: str) -> tuple[httpx2.Response, float]:
    started = time.monotonic()
    response = httpx2.get(url, timeout=30)
    return response, time.monotonic() - started


def _post_rpc(server: LiveServer, key: str, message: dict[str, object]) -> httpx2.Response:
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": VERSION,
        "X-Request-ID": uuid.uuid4().hex,
    }
    return httpx2.post(server.mcp_url, content=json.dumps(message), headers=headers, timeout=30)


@pytest.mark.postgres
@pytest.mark.live_server
def test_it_reports_a_lost_database_in_bounded_time_and_healthz_stays_up(
    server_losing_its_database: tuple[LiveServer, dict[str, str]],
) -> None:
    server, keys = server_losing_its_database
    ready, _ = _timed_get(f"{server.url}/readyz")
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    admin = _signed_in(server)

    _drop_database(server)

    ready, seconds = _timed_get(f"{server.url}/readyz")
    assert (ready.status_code, ready.json()) == (503, {"status": "unavailable"})
    assert int(ready.headers["retry-after"]) >= 1
    assert seconds < READINESS_TIMEOUT_SECONDS + SLACK_SECONDS, seconds
    health, seconds = _timed_get(f"{server.url}/healthz")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert seconds < SLACK_SECONDS

    refused = _answers_without_a_database(server, keys["olivia"])
    page = admin.get(f"{server.url}/admin/")  # the session lives in the database
    assert page.status_code == 503
    assert int(page.headers["retry-after"]) >= 1
    admin.close()

    stop_live_server(server, None)
    log = server.log_text()
    for request_id in refused:
        # Audit rows that could never be written are logged, with their fields, at exit.
        assert f"'request_id': '{request_id}'" in log, _interesting(log)
    assert "audit event not recorded" in log
    assert keys["olivia"] not in log


def _answers_without_a_database(server: LiveServer, key: str) -> list[str]:
    """Each transport's answer when authentication itself cannot reach the database."""
    with httpx2.Client(timeout=30) as http:
        started = time.monotonic()
        tool = call_tool(http, server, key, "server_identity", {})
    assert time.monotonic() - started < 2 * SLACK_SECONDS
    assert (tool.status, tool.kind, tool.code) == (200, "tool_error", "unavailable"), tool
    assert tool.data["retry_after"] >= 1

    listed = _post_rpc(server, key, {"jsonrpc": "2.0", "id": "list-1", "method": "tools/list"})
    assert listed.status_code == 200
    body = listed.json()
    assert body["id"] == "list-1"
    assert -32099 <= body["error"]["code"] <= -32000
    assert body["error"]["code"] != -32603
    assert body["error"]["data"]["code"] == "unavailable"

    rest_id = uuid.uuid4().hex
    rest = httpx2.get(
        f"{server.api_url}/v1/identity",
        headers={"Authorization": f"Bearer {key}", "X-Request-ID": rest_id},
        timeout=30,
    )
    assert rest.status_code == 503
    assert int(rest.headers["retry-after"]) >= 1
    assert rest.json()["error"]["code"] == "unavailable"
    return [tool.request_id, listed.request.headers["x-request-id"], rest_id]


def _signed_in(server: LiveServer) -> httpx2.Client:
    """A person signed in through the real sign-in form; the session cookie stays."""
    http = httpx2.Client(timeout=30)
    login = f"{server.url}/accounts/login/"
    form = forms_of(http.get(login).text)
    fields = {i["name"]: i.get("value", "") for i in form.inputs if i.get("name")}
    fields.update(username="olivia", password=PASSWORD)
    answer = http.post(login, data=fields, headers={"Origin": server.url, "Referer": login})
    assert answer.status_code == 302, answer.text[:300]
    assert http.get(f"{server.url}/admin/").status_code == 200
    return http


def _drop_database(server: LiveServer) -> None:
    """The server's database disappears (its connections are ended with it)."""
    name = server.env["DATABASE_URL"].rsplit("/", 1)[1]
    assert name.startswith("test_"), name  # only ever a test database of our own
    with maintenance_connection() as connection:
        connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def _interesting(log: str) -> str:
    return "\n".join(line for line in log.splitlines() if " DEBUG " not in line)[-4000:]
