"""The production set-up (gunicorn, behind a proxy named in HEYAIRA_TRUSTED_PROXIES): clients
that the proxy names by X-Forwarded-For with many addresses of one IPv6 /64 are one client for
registration (20 an hour) and for the sign-in lockout (10 failures in 15 minutes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.identity.test_limits_per_network import METADATA, hosts_of
from tests.live import LiveServer, read_form, start_live_server, stop_live_server

PASSWORD = "a-long-live-password-9"


@pytest.fixture
def behind_proxy(tmp_path: Path) -> Iterator[LiveServer]:
    settings = {
        "HEYAIRA_TRUSTED_PROXIES": "127.0.0.1",  # the test client plays the proxy
        "HEYAIRA_DCR_RATE_LIMIT_PER_HOUR": "20",  # the default (live servers raise it)
    }
    server, pg_name = start_live_server(tmp_path, gunicorn=True, extra_env=settings)
    try:
        yield server
    finally:
        stop_live_server(server, pg_name)


def test_sixty_registrations_from_one_64_behind_the_proxy_are_held_to_the_limit(
    behind_proxy: LiveServer,
):
    with httpx2.Client(base_url=behind_proxy.url, timeout=30) as http:
        answers = [
            http.post(
                "/oauth/register/", json=METADATA, headers={"X-Forwarded-For": host}
            ).status_code
            for host in hosts_of("2001:db8:a:b", 60)
        ]
        other = http.post(
            "/oauth/register/", json=METADATA, headers={"X-Forwarded-For": "2001:db8:a:c::1"}
        )
    print(f"\nfrom one /64: {answers.count(201)} registered, {answers.count(429)} refused")
    assert (answers.count(201), answers.count(429)) == (20, 40)
    assert other.status_code == 201


def _sign_in(http: httpx2.Client, host: str, password: str) -> int:
    page = http.get("/accounts/login/", headers={"X-Forwarded-For": host})
    token = next(
        i["value"] for i in read_form(page.text).inputs if i.get("name") == "csrfmiddlewaretoken"
    )
    form = {"username": "olivia", "password": password, "csrfmiddlewaretoken": token}
    answer = http.post("/accounts/login/", data=form, headers={"X-Forwarded-For": host})
    return answer.status_code


def test_the_sign_in_lockout_holds_across_one_64_behind_the_proxy(behind_proxy: LiveServer):
    behind_proxy.add_person("olivia", PASSWORD, "alpha", "owner")
    hosts = hosts_of("2001:db8:d:e", 41)
    with httpx2.Client(base_url=behind_proxy.url, timeout=30) as http:
        guesses = [_sign_in(http, host, "wrong-Guess-123") for host in hosts[:40]]
        right_inside = _sign_in(http, hosts[40], PASSWORD)
        right_outside = _sign_in(http, "2001:db8:d:f::1", PASSWORD)
    print(f"\n40 wrong passwords from one /64: {guesses.count(200)} checked")
    assert (guesses.count(200), guesses.count(429)) == (10, 30)
    assert right_inside == 429  # even the right password, from yet another address in it
    assert right_outside == 302
