"""One client refreshing on several connections at once, against the production server (gunicorn,
two workers, the test run's database): 2 and then 8 simultaneous uses of one refresh token, ten
rounds each. Every use gets the rotation's answer, and every racer's next MCP call works. A
repeat after the window still revokes the whole family, and the audit log says so.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx2
import pytest

from tests.identity.flows import pkce_pair
from tests.live import ConsentBrowser, LiveServer, start_live_server, stop_live_server

pytestmark = pytest.mark.live_server

PASSWORD = "correct-horse-battery-staple-42"
WINDOW_SECONDS = 5
REDIRECT_URI = "http://127.0.0.1:33418/callback"


@pytest.fixture
def production_server(tmp_path: Path) -> Iterator[LiveServer]:
    server, pg_name = start_live_server(
        tmp_path,
        gunicorn=True,
        extra_env={
            "WEB_CONCURRENCY": "2",
            "HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS": str(WINDOW_SECONDS),
        },
    )
    try:
        yield server
    finally:
        stop_live_server(server, pg_name)


def first_tokens(server: LiveServer) -> tuple[str, dict[str, Any]]:
    """A public client registered, authorized by olivia for alpha, its code exchanged."""
    registered = httpx2.post(
        f"{server.url}/oauth/register/",
        json={
            "client_name": "Busy client",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
        },
        timeout=30,
    ).json()
    client_id = registered["client_id"]
    verifier, challenge = pkce_pair()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": "continuity:read continuity:write",
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": server.mcp_url,
    }
    browser = ConsentBrowser(username="olivia", password=PASSWORD, project_slug="alpha")
    location = anyio.run(browser.authorize, f"{server.url}/oauth/authorize/?{urlencode(query)}")
    code = parse_qs(urlsplit(location).query)["code"][0]
    tokens = httpx2.post(
        f"{server.url}/oauth/token/",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
        },
        timeout=30,
    ).json()
    return client_id, tokens


def refresh(server: LiveServer, client_id: str, refresh_token: str) -> httpx2.Response:
    return httpx2.post(
        f"{server.url}/oauth/token/",
        data={
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": client_id,
        },
        timeout=60,
    )


def mcp_identity(server: LiveServer, access_token: str) -> httpx2.Response:
    """One MCP call (tools/call server_identity) over HTTP with this token."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "server_identity", "arguments": {}},
    }
    return httpx2.post(
        server.mcp_url,
        content=json.dumps(message).encode(),
        headers={
            "Authorization": f"Bearer {access_token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        timeout=60,
    )


def race(server: LiveServer, client_id: str, refresh_token: str, racers: int) -> list[Any]:
    """`racers` threads present one refresh token at once, then each makes its MCP call."""
    start = threading.Barrier(racers)
    results: list[Any] = [None] * racers

    def racer(index: int) -> None:
        start.wait()
        answer = refresh(server, client_id, refresh_token)
        if answer.status_code != 200:
            results[index] = (answer.status_code, answer.text, None)
            return
        body = answer.json()
        results[index] = (answer.status_code, body, mcp_identity(server, body["access_token"]))

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_simultaneous_refreshes_keep_the_grant_and_a_late_replay_ends_it(
    production_server: LiveServer,
):
    server = production_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    client_id, tokens = first_tokens(server)
    current = tokens["refresh_token"]
    presented: list[str] = []

    for racers in (2, 8):
        for _ in range(10):
            began = time.monotonic()
            results = race(server, client_id, current, racers)
            print(f"{racers} racers: {time.monotonic() - began:.2f} s")
            presented.append(current)
            assert [status for status, _, _ in results] == [200] * racers, results
            answers = {(body["access_token"], body["refresh_token"]) for _, body, _ in results}
            assert len(answers) == 1, "every use of the token got the same answer"
            for _, _, call in results:
                assert call.status_code == 200, call.text
                result = call.json()["result"]
                assert result["isError"] is False
                assert result["structuredContent"]["project"]["slug"] == "alpha"
            current = results[0][1]["refresh_token"]
            latest_access = results[0][1]["access_token"]

    families = server.run_python(
        """
from identity.models import RefreshToken
result = [RefreshToken.objects.values("token_family").distinct().count(),
          RefreshToken.objects.filter(revoked__isnull=True).count(),
          RefreshToken.objects.count()]
"""
    )
    assert families == [1, 1, 21]  # one family, one live token, one rotation per round

    # A replay of a rotated token after the window: reuse (RFC 9700), the family dies.
    time.sleep(WINDOW_SECONDS + 0.5)
    late = refresh(server, client_id, presented[-1])
    assert late.status_code == 400
    assert late.json()["error"] == "invalid_grant"
    assert mcp_identity(server, latest_access).status_code == 401
    assert refresh(server, client_id, current).json()["error"] == "invalid_grant"
    audit = server.run_python(
        """
from audit.models import AuditEvent
result = {
    "reuse": [[e.outcome, e.error_code, e.actor_label] for e in
              AuditEvent.objects.filter(operation="oauth_refresh_reuse")],
    "replayed": AuditEvent.objects.filter(operation="oauth_token_refresh",
                                          outcome="replayed").count(),
    "rotations": AuditEvent.objects.filter(operation="oauth_token_refresh",
                                           outcome="success").count(),
}
"""
    )
    # The late replay, then the newest token presented after the family died.
    assert audit["reuse"] == [["rejected", "family_revoked", "olivia"]] * 2
    assert audit["rotations"] == 20
    assert audit["replayed"] == 10 * (2 - 1) + 10 * (8 - 1)
