"""The official MCP conformance suite against /mcp on the real server, through a header-adding
proxy (the suite cannot send credentials; the product has no way to switch them off), in two
versions pinned side by side in scripts/conformance/package.json:

- 0.1.16, `--suite all`: the handshake-era scenarios;
- 0.2.0-alpha.12, `--requirements 2026-07-28`: exactly what the 2026-07-28 revision requires
  (frozen at its release), run at that revision's stateless wire; and its `authorization`
  command against the authorization server, with a person signing in and allowing.

Needs Node 22 and the suites in .tools/conformance, installed by `scripts/install_conformance.sh`
(`.ci/run` calls it). Without them the tests are skipped, except in CI, where they fail: there
they must run.

The scenarios HeyAira cannot pass (they need the suite's fixed test tools, prompts, resources,
logging or SSE streams) are listed, each with its reason, in scripts/conformance/
expected-failures-<version>.yml. The suite itself fails on a failure missing from that file and
on an entry that now passes, so each list stays exact. Beyond the suite's verdict per scenario,
these tests read every check: the scenarios that apply to a tools-only server pass with no
failure or warning, and the two listed for one inapplicable part fail on that part only.
"""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from tests.continuity.mcp import node_tools
from tests.continuity.mcp.conformance_proxy import API_KEY_VARIABLE
from tests.continuity.mcp.node_tools import NODE, SUITE, SUITE_NEXT
from tests.live import (
    REPO,
    ConsentBrowser,
    LiveServer,
    free_port,
    start_live_server,
    stop_live_server,
)

pytestmark = [pytest.mark.live_server, pytest.mark.conformance]

EXPECTED = REPO / "scripts" / "conformance"
BASELINE = EXPECTED / "expected-failures-0.1.16.yml"
BASELINE_NEXT = EXPECTED / "expected-failures-0.2.0-alpha.12.yml"
REQUIRED = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")
# 0.2.0-alpha.12 at 2026-07-28: the scenarios that apply to a tools-only server, every check of
# which passes (INFO and SKIPPED are not faults; FAILURE and WARNING are).
REQUIRED_NEXT = (
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "input-required-result-unsupported-methods",
    "input-required-result-validate-input",
    "http-header-validation",  # not scored at 2026-07-28 (pending), but it applies and passes
)
# Scenarios that apply in part: the checks that may fail, and why (the rest must pass).
PARTLY_NEXT: dict[str, dict[str, str]] = {
    "server-stateless": {
        "sep-2575-server-rejects-undeclared-capability": "needs the test_missing_capability tool",
        "sep-2575-missing-capability-http-400": "needs the test_missing_capability tool",
        "sep-2575-http-server-no-independent-requests-on-stream": "needs a streaming test tool",
        "sep-2575-server-no-log-without-loglevel": "needs the test_logging_tool tool",
    },
    "caching": {
        "sep-2549-prompts-list-caching-hints": "no prompts",
        "sep-2549-resources-list-caching-hints": "no resources",
        "sep-2549-resources-templates-list-caching-hints": "no resource templates",
    },
}
# subscriptions/listen: not applicable to a server that declares nothing to subscribe to.
LISTEN_CHECKS = (
    "sep-2575-server-sends-subscription-ack",
    "sep-2575-server-tags-subscription-id",
    "sep-2575-server-honors-notification-filter",
)
FAULTS = ("FAILURE", "WARNING")
SUITE_TIMEOUT = 600
RESULT_FOLDER = re.compile(r"^(?:server|authorization-server)-(.+)-\d{4}-\d\d-\d\dT")


def baseline_scenarios(path: Path) -> list[str]:
    """The scenario names under `server:` (the file is a plain YAML list, read without YAML)."""
    names = []
    for line in path.read_text().splitlines():
        stripped = line.split("#", 1)[0].strip()
        if stripped.startswith("- "):
            names.append(stripped[2:].strip())
    return names


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the conformance proxy exited early")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the conformance proxy did not listen within {timeout}s")


@pytest.fixture
def proxied_server(tmp_path: Path) -> Iterator[tuple[LiveServer, str]]:
    """The real server, whose public URL is the proxy's, and the proxy's /mcp URL."""
    node_tools.require(SUITE, SUITE_NEXT)
    proxy_port = free_port()
    public_url = f"http://127.0.0.1:{proxy_port}"
    server, pg_name = start_live_server(tmp_path, public_url=public_url)
    proxy: subprocess.Popen[bytes] | None = None
    try:
        server.add_person("conformance", "conformance-password-0123456789", "conformance", "owner")
        api_key = server.manage("create_api_key", "conformance", "--user", "conformance")
        env = {**os.environ, API_KEY_VARIABLE: api_key.strip().splitlines()[-1]}
        command = [sys.executable, "-m", "tests.continuity.mcp.conformance_proxy"]
        command += ["--port", str(proxy_port), "--upstream", server.url]
        with (tmp_path / "proxy.log").open("wb") as log:
            proxy = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
        _wait_for_port(proxy_port, proxy)
        yield server, f"{public_url}/mcp"
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(timeout=15)
        stop_live_server(server, pg_name)


def run_suite(suite: Path, arguments: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(NODE), str(suite), *arguments, "--output-dir", str(tmp_path / "results")],
        cwd=tmp_path,
        env=node_tools.env_with_node(),
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
    )


def test_it_passes_the_conformance_suite_with_only_the_baseline_failing(
    proxied_server: tuple[LiveServer, str], tmp_path: Path
) -> None:
    server, mcp_url = proxied_server
    arguments = ["server", "--url", mcp_url, "--suite", "all", "--expected-failures", str(BASELINE)]
    done = run_suite(SUITE, arguments, tmp_path)
    report = f"{done.stdout}\n{done.stderr}\n--- server log ---\n{server.log_text()[-5000:]}"
    assert done.returncode == 0, report
    checks = all_checks(tmp_path / "results")
    for scenario in REQUIRED:
        assert checks.get(scenario), f"{scenario} did not run:\n{report}"
        bad = [c for c in checks[scenario] if c["status"] in FAULTS]
        assert not bad, f"{scenario}: {bad}"


def test_it_passes_what_2026_07_28_requires_of_a_tools_only_server(
    proxied_server: tuple[LiveServer, str], tmp_path: Path
) -> None:
    server, mcp_url = proxied_server
    arguments = ["server", "--url", mcp_url, "--requirements", "2026-07-28"]
    done = run_suite(SUITE_NEXT, [*arguments, "--expected-failures", str(BASELINE_NEXT)], tmp_path)
    report = f"{done.stdout}\n{done.stderr}\n--- server log ---\n{server.log_text()[-5000:]}"
    assert done.returncode == 0, report
    checks = all_checks(tmp_path / "results")
    for scenario in REQUIRED_NEXT:
        assert checks.get(scenario), f"{scenario} did not run:\n{report}"
        bad = [c for c in checks[scenario] if c["status"] in FAULTS]
        assert not bad, f"{scenario}: {bad}"
    for scenario, allowed in PARTLY_NEXT.items():
        bad = [c for c in checks[scenario] if c["status"] in FAULTS and c["id"] not in allowed]
        assert not bad, f"{scenario}: {bad}"
    listen = {c["id"]: c["status"] for c in checks["server-stateless"] if c["id"] in LISTEN_CHECKS}
    assert listen == dict.fromkeys(LISTEN_CHECKS, "SKIPPED"), listen


def test_the_authorization_server_passes_the_authorization_command(
    tmp_path: Path,
) -> None:
    """Metadata, then an authorization code grant: the suite prints the authorization URL and
    waits on its callback; a person signs in and allows (ConsentBrowser), and the redirect is
    delivered to the suite, which redeems the code at the token endpoint."""
    node_tools.require(SUITE_NEXT)
    server, pg_name = start_live_server(tmp_path)
    try:
        server.add_person("ada", "ada-password-0123456789", "conformance", "owner")
        port = free_port()
        client_id = register_public_client(server, f"http://127.0.0.1:{port}/callback")
        arguments = ["authorization", "--url", server.url, "--client-id", client_id]
        arguments += ["--resource", server.mcp_url, "--port", str(port)]
        output = run_authorization(arguments, tmp_path)
    finally:
        stop_live_server(server, pg_name)
    checks = all_checks(tmp_path / "results")
    assert set(checks) == {"authorization-server-metadata-endpoint", "authorization-code-grant"}
    found = [check for found in checks.values() for check in found]
    # No warning either: the metadata advertises client ID metadata documents, so the suite's
    # CIMD check passes too.
    bad = [c for c in found if c["status"] in FAULTS]
    assert not bad, output
    assert "authorization-server-metadata-cimd" in {c["id"] for c in found}, output
    grant = checks["authorization-code-grant"]
    assert [c["status"] for c in grant] == ["SUCCESS"], output


def register_public_client(server: LiveServer, redirect_uri: str) -> str:
    registered = httpx2.post(
        f"{server.url}/oauth/register/",
        json={
            "client_name": "MCP conformance suite",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
        timeout=30,
    )
    assert registered.status_code == 201, registered.text
    client_id: str = registered.json()["client_id"]
    return client_id


def run_authorization(arguments: list[str], tmp_path: Path) -> str:
    """Runs the command, plays the person for the URL it prints, and returns its output."""
    command = [str(NODE), str(SUITE_NEXT), *arguments, "--output-dir", str(tmp_path / "results")]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=node_tools.env_with_node(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    output = process.stdout
    assert output is not None

    def read() -> None:
        for line in output:
            lines.put(line)

    reader = threading.Thread(target=read)
    reader.start()
    seen: list[str] = []
    try:
        authorization_url = _printed_url(lines, seen, "/oauth/authorize/")
        browser = ConsentBrowser("ada", "ada-password-0123456789", project_slug="conformance")
        callback = anyio.run(browser.authorize, authorization_url)
        assert callback.startswith("http://127.0.0.1:"), callback
        httpx2.get(callback, timeout=30)  # the suite's own callback server receives the code
        process.wait(timeout=SUITE_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=15)
        reader.join(timeout=15)
    while not lines.empty():
        seen.append(lines.get())
    return "".join(seen)


def _printed_url(lines: queue.Queue[str], seen: list[str], path: str) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        if line.startswith("http") and path in line:
            return line.strip()
    raise AssertionError("the suite printed no authorization URL:\n" + "".join(seen))


def test_the_baselines_never_excuse_a_required_scenario() -> None:
    for path, required in ((BASELINE, REQUIRED), (BASELINE_NEXT, REQUIRED_NEXT)):
        listed = baseline_scenarios(path)
        assert listed, f"{path.name} lists no scenario"
        assert not set(required) & set(listed)
        assert len(listed) == len(set(listed))
    assert set(PARTLY_NEXT) <= set(baseline_scenarios(BASELINE_NEXT))


def all_checks(results: Path) -> dict[str, list[dict[str, str]]]:
    """Each scenario's checks: the suite writes <leg>-<scenario>-<timestamp>/checks.json."""
    found: dict[str, list[dict[str, str]]] = {}
    for path in results.glob("*/checks.json"):
        match = RESULT_FOLDER.match(path.parent.name)
        if match is not None:
            found.setdefault(match.group(1), []).extend(json.loads(path.read_text()))
    return found
