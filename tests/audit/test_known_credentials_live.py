"""A leaked revoked key, used 10,000 times against the production server (gunicorn, half over
REST and half over /mcp, several clients at once), adds a handful of audit rows to its project's
chain, not 10,000, and the counts add up to exactly 10,000."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from tests.live import LiveServer, start_live_server, stop_live_server

USES = 10_000
CLIENTS = 8
PASSWORD = "a-long-live-password-7"
TOOL_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "server_identity", "arguments": {}},
}
MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


@pytest.fixture
def server(tmp_path: Path, live_processes: None) -> Iterator[LiveServer]:
    live, pg_name = start_live_server(tmp_path, gunicorn=True)
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


def _revoked_key(server: LiveServer) -> str:
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    secret = server.manage("create_api_key", "alpha", "--user", "olivia").strip().splitlines()[-1]
    server.run_python(
        "from projects.api_keys import api_key_revoke\n"
        "from projects.callers import operator_caller\n"
        "from projects.models import ApiKey\n"
        "key = ApiKey.objects.get()\n"
        "api_key_revoke(operator_caller(key.project), api_key_id=key.pk)"
    )
    return secret


def _state(server: LiveServer) -> dict[str, int]:
    return dict(
        server.run_python(
            "from django.db.models import Sum\n"
            "from audit.models import AuditEvent, CountedEvent\n"
            "from projects.models import Project\n"
            "alpha = Project.objects.get(slug='alpha')\n"
            "counted = CountedEvent.objects.filter(reason='api_key_revoked')\n"
            "result = {\n"
            "  'chain': AuditEvent.objects.filter(project_id=alpha.pk).count(),\n"
            "  'rows': AuditEvent.objects.filter(error_code='api_key_revoked').count(),\n"
            "  'counted': counted.aggregate(n=Sum('count'))['n'] or 0,\n"
            "  'buckets': counted.count(),\n"
            "}"
        )
    )


def _use(server: LiveServer, secret: str, times: int, transport: str) -> Counter[int]:
    statuses: Counter[int] = Counter()
    auth = {"Authorization": f"Bearer {secret}"}
    with httpx2.Client(base_url=server.url, timeout=60, headers=auth) as http:
        for _ in range(times):
            if transport == "rest":
                answer = http.get("/api/v1/identity")
            else:
                answer = http.post("/mcp", json=TOOL_CALL, headers=MCP_HEADERS)
            statuses[answer.status_code] += 1
    return statuses


def test_a_revoked_key_used_10000_times_adds_a_handful_of_rows(server: LiveServer):
    secret = _revoked_key(server)
    before = _state(server)
    started = time.monotonic()
    share = USES // CLIENTS
    transports = ["rest" if n % 2 else "mcp" for n in range(CLIENTS)]
    with ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(lambda t: _use(server, secret, share, t), transports))
    seconds = time.monotonic() - started
    statuses = sum(results, Counter())
    after = _state(server)
    added = after["chain"] - before["chain"]
    print(
        f"\n{USES} uses of a revoked key in {seconds:.1f} s: {added} audit rows added to the "
        f"project's chain, {after['counted']} counted in {after['buckets']} window(s)"
    )
    assert statuses == Counter({401: USES})
    assert after["counted"] == USES  # every use counted, none lost
    assert after["rows"] == after["buckets"]  # one row per window, the first of each
    assert added == after["buckets"] <= 3  # a handful, whatever the number of uses
