"""Against real servers (uvicorn as `make run` starts it, gunicorn with its uvicorn worker as in
production): a forged X-Forwarded-For from an untrusted peer changes nothing; a trusted proxy's
is used, by the rate limits and the anonymous-noise counts alike. And a short real flood of bogus
bearers adds a bounded number of rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.live import LiveServer, start_live_server, stop_live_server

pytestmark = pytest.mark.django_db(transaction=True)

REGISTRATION = {
    "client_name": "proxy test",
    "redirect_uris": ["http://127.0.0.1:9999/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "none",
}
LIMIT = 3  # registrations per address per hour, for these servers
FLOOD = 300
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture(params=["uvicorn", "gunicorn"])
def server_kind(request: pytest.FixtureRequest, live_processes: None) -> str:
    return str(request.param)


def _server(tmp_path: Path, kind: str, trusted: str) -> Iterator[LiveServer]:
    env = {"HEYAIRA_DCR_RATE_LIMIT_PER_HOUR": str(LIMIT), "HEYAIRA_TRUSTED_PROXIES": trusted}
    server, pg_name = start_live_server(tmp_path, extra_env=env, gunicorn=kind == "gunicorn")
    try:
        yield server
    finally:
        stop_live_server(server, pg_name)


@pytest.fixture
def untrusting(tmp_path: Path, server_kind: str) -> Iterator[LiveServer]:
    yield from _server(tmp_path, server_kind, "")


@pytest.fixture
def behind_proxy(tmp_path: Path, server_kind: str) -> Iterator[LiveServer]:
    yield from _server(tmp_path, server_kind, "127.0.0.1")


def _register(http: httpx2.Client, forwarded_for: str) -> int:
    response = http.post(
        "/oauth/register/",
        content=json.dumps(REGISTRATION),
        headers={"content-type": "application/json", "x-forwarded-for": forwarded_for},
    )
    return response.status_code


def _bogus_bearer(http: httpx2.Client, forwarded_for: str) -> int:
    headers = {
        "authorization": "Bearer forged-token",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "x-forwarded-for": forwarded_for,
    }
    return http.post("/mcp", content=json.dumps(LIST_TOOLS), headers=headers).status_code


def _noise(server: LiveServer) -> tuple[list[list[object]], int]:
    """(the counters as [source, reason, count], the authenticate audit rows)."""
    counts, rows = server.run_python(
        "from audit.models import AnonymousRejection, AuditEvent\n"
        "result = [[[r.source, r.reason, r.count] for r in AnonymousRejection.objects.all()],\n"
        "          AuditEvent.objects.filter(operation='authenticate').count()]"
    )
    return counts, int(rows)


def test_a_forged_forwarded_for_from_an_untrusted_peer_changes_nothing(untrusting: LiveServer):
    with httpx2.Client(base_url=untrusting.url, timeout=30) as http:
        statuses = [_register(http, f"198.51.100.{n}") for n in range(LIMIT + 1)]
        assert statuses == [201] * LIMIT + [429]  # every registration counted as 127.0.0.1
        flood = {_bogus_bearer(http, f"203.0.113.{n % 250}") for n in range(FLOOD)}
    assert flood == {401}
    counts, audit_rows = _noise(untrusting)
    # Every bogus bearer counted under the peer's own address, none under a forged one: one
    # counter row, or two when the flood crossed the end of a 10-minute window.
    assert {(row[0], row[1]) for row in counts} == {("127.0.0.1", "invalid_token")}
    assert sum(int(str(row[2])) for row in counts) == FLOOD
    assert len(counts) <= 2
    assert audit_rows <= 2  # the first of the window (two if the flood crossed a window)


def test_a_trusted_proxys_forwarded_for_is_used(behind_proxy: LiveServer):
    with httpx2.Client(base_url=behind_proxy.url, timeout=30) as http:
        statuses = [_register(http, f"6.6.6.6, 198.51.100.{n}") for n in range(LIMIT + 1)]
        assert statuses == [201] * (LIMIT + 1)  # four clients, one registration each
        again = [_register(http, "198.51.100.0") for _ in range(LIMIT)]
        assert again == [201] * (LIMIT - 1) + [429]  # the first one's address hits its limit
        assert _bogus_bearer(http, "6.6.6.6, 198.51.100.7") == 401
    counts, _ = _noise(behind_proxy)
    assert counts == [["198.51.100.7", "invalid_token", 1]]
