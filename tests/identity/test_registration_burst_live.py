"""Forty registrations at once against the production server (gunicorn, the test run's database):
only 201 and 429, never a 503 from a pool starved by PBKDF2 hashing.

A public client's registration hashes nothing; a confidential one hashes its secret before the
request takes a database connection (identity.registration).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.live import LiveServer, start_live_server, stop_live_server

pytestmark = pytest.mark.live_server

AT_ONCE = 40


def production_server(tmp_path: Path, **env: str) -> Iterator[LiveServer]:
    server, pg_name = start_live_server(tmp_path, gunicorn=True, extra_env=env)
    try:
        yield server
    finally:
        stop_live_server(server, pg_name)


@pytest.fixture
def limited_server(tmp_path: Path) -> Iterator[LiveServer]:
    # One worker: the per-network counter lives in its memory (a shared CACHE_URL makes it
    # exact across workers; with one worker it is exact too).
    yield from production_server(tmp_path, HEYAIRA_DCR_RATE_LIMIT_PER_HOUR="20")


@pytest.fixture
def open_server(tmp_path: Path) -> Iterator[LiveServer]:
    yield from production_server(tmp_path, WEB_CONCURRENCY="2")


def burst(server: LiveServer, auth_method: str) -> list[httpx2.Response]:
    start = threading.Barrier(AT_ONCE)
    answers: list[httpx2.Response] = []

    def register(index: int) -> None:
        start.wait()
        answers.append(
            httpx2.post(
                f"{server.url}/oauth/register/",
                json={
                    "client_name": f"burst {index}",
                    "redirect_uris": ["http://127.0.0.1:33418/callback"],
                    "token_endpoint_auth_method": auth_method,
                },
                timeout=120,
            )
        )

    threads = [threading.Thread(target=register, args=(i,)) for i in range(AT_ONCE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def stored_clients(server: LiveServer) -> list[int]:
    return list(
        server.run_python(
            """
from identity.models import Application
result = [Application.objects.count(), Application.objects.exclude(client_secret="").count()]
"""
        )
    )


def test_forty_public_registrations_at_once_get_201_or_429(limited_server: LiveServer):
    answers = burst(limited_server, "none")

    statuses = Counter(answer.status_code for answer in answers)
    print(f"40 public registrations at once: {dict(statuses)}")
    assert statuses == {201: 20, 429: 20}
    refused = [answer.json() for answer in answers if answer.status_code == 429]
    assert {body["error"] for body in refused} == {"rate_limited"}
    assert stored_clients(limited_server) == [20, 0]  # no secret stored for any of them


def test_forty_confidential_registrations_at_once_all_succeed(open_server: LiveServer):
    answers = burst(open_server, "client_secret_basic")

    statuses = Counter(answer.status_code for answer in answers)
    print(f"40 confidential registrations at once: {dict(statuses)}")
    assert statuses == {201: AT_ONCE}
    assert len({answer.json()["client_secret"] for answer in answers}) == AT_ONCE
    assert stored_clients(open_server) == [AT_ONCE, AT_ONCE]
