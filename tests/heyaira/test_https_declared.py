"""When HTTPS is declared (an https HEYAIRA_PUBLIC_URL behind a TLS proxy), browsers are told to
use nothing else (HSTS), plain requests are redirected, and `manage.py check --deploy` is clean
with the production settings docs/operating.md gives. Without HTTPS, none of it applies."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.live import REPO, LiveServer, free_port, start_live_server, stop_live_server

OPERATING = REPO / "docs" / "operating.md"
YEAR = 365 * 24 * 3600


def documented_production_environment(tmp_path: Path) -> dict[str, str]:
    """The `export NAME=value` lines of docs/operating.md's deployment block, with its elided
    values (`…`) made up: fresh secrets, a SQLite file for the database URL."""
    text = OPERATING.read_text()
    block = text.split("## Deploying", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    env: dict[str, str] = {}
    for name, value in re.findall(r"^export (\w+)=(\S+)", block, re.MULTILINE):
        if "…" in value:
            value = secrets.token_urlsafe(50)
        env[name] = value
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'deploy.sqlite3'}"
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    # Only PATH and HOME from outside: nothing else of this machine's environment leaks in.
    base = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_check_deploy_is_clean_with_the_documented_production_settings(tmp_path: Path):
    env = documented_production_environment(tmp_path)
    assert env["HEYAIRA_PUBLIC_URL"].startswith("https://")
    assert env["HEYAIRA_BEHIND_TLS_PROXY"] == "true"
    done = _run(env, "check", "--deploy", "--fail-level", "WARNING")
    output = done.stdout + done.stderr
    print(f"\n{output.strip()}")
    assert done.returncode == 0, output
    assert "System check identified no issues" in output
    assert "WARNINGS" not in output


def _settings(env: dict[str, str]) -> dict[str, object]:
    names = ["SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_SSL_REDIRECT"]
    code = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {names!r}}}))"
    )
    done = _run(env, "shell", "-c", code)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_without_https_nothing_is_pinned(tmp_path: Path):
    env = documented_production_environment(tmp_path)
    env["HEYAIRA_PUBLIC_URL"] = "http://heyaira.internal:8000"
    assert _settings(env) == {
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_SSL_REDIRECT": False,
    }


def test_hsts_can_be_set_and_turned_off(tmp_path: Path):
    env = documented_production_environment(tmp_path)
    env.update(HEYAIRA_HSTS_SECONDS="600", HEYAIRA_HSTS_INCLUDE_SUBDOMAINS="false")
    assert _settings(env)["SECURE_HSTS_SECONDS"] == 600
    assert _settings(env)["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is False


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[LiveServer]:
    """The server behind a TLS proxy (played by the test client's X-Forwarded-Proto)."""
    public = f"https://127.0.0.1:{free_port()}"
    server, pg_name = start_live_server(
        tmp_path, public_url=public, extra_env={"HEYAIRA_BEHIND_TLS_PROXY": "true"}
    )
    try:
        yield server
    finally:
        stop_live_server(server, pg_name)


def test_a_secure_answer_carries_hsts_and_a_plain_request_is_redirected(https_server: LiveServer):
    with httpx2.Client(base_url=https_server.url, timeout=30, follow_redirects=False) as http:
        secure = http.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})
        plain = http.get("/accounts/login/")
        probe = http.get("/healthz")  # health probes reach the app directly, over plain HTTP
    assert secure.status_code == 200
    assert secure.headers["strict-transport-security"] == f"max-age={YEAR}; includeSubDomains"
    assert plain.status_code == 301
    assert plain.headers["location"].startswith("https://")
    assert probe.status_code == 200
