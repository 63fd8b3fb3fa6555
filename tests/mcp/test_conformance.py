"""The official MCP conformance suite against /mcp on the real server, through a header-adding
proxy (the suite cannot send credentials; the product has no way to switch them off).

Needs Node 22 and `@modelcontextprotocol/conformance` in .tools/conformance, installed by
`scripts/install_conformance.sh` (`.ci/run` calls it). Without them the test is skipped, except
in CI, where it fails: there it must run.

Every scenario runs (`--suite all`); the ones HeyAira cannot pass (they need the suite's fixed
test tools, prompts, resources, logging or SSE streams) are listed in conformance-baseline.yml.
The suite itself fails on a failure missing from the baseline and on a baseline entry that now
passes, so the baseline stays exact.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import REPO, LiveServer, free_port, start_live_server, stop_live_server
from tests.mcp import node_tools
from tests.mcp.conformance_proxy import API_KEY_VARIABLE
from tests.mcp.node_tools import NODE, SUITE

pytestmark = [pytest.mark.live_server, pytest.mark.conformance]

BASELINE = Path(__file__).with_name("conformance-baseline.yml")
REQUIRED = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")
SUITE_TIMEOUT = 300
RESULT_FOLDER = re.compile(r"^server-(.+)-\d{4}-\d\d-\d\dT")


def baseline_scenarios() -> list[str]:
    """The scenario names under `server:` (the file is a plain YAML list, read without YAML)."""
    names = []
    for line in BASELINE.read_text().splitlines():
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
    node_tools.require(SUITE)
    proxy_port = free_port()
    public_url = f"http://127.0.0.1:{proxy_port}"
    server, pg_name = start_live_server(tmp_path, public_url=public_url)
    proxy: subprocess.Popen[bytes] | None = None
    try:
        server.add_person("conformance", "conformance-password-0123456789", "conformance", "owner")
        api_key = server.manage("create_api_key", "conformance", "--user", "conformance")
        env = {**os.environ, API_KEY_VARIABLE: api_key.strip().splitlines()[-1]}
        command = [sys.executable, "-m", "tests.mcp.conformance_proxy"]
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


def test_it_passes_the_conformance_suite_with_only_the_baseline_failing(
    proxied_server: tuple[LiveServer, str], tmp_path: Path
) -> None:
    server, mcp_url = proxied_server
    results = tmp_path / "results"
    command = [str(NODE), str(SUITE), "server", "--url", mcp_url, "--suite", "all"]
    command += ["--expected-failures", str(BASELINE), "--output-dir", str(results)]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env=node_tools.env_with_node(),
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
    )
    report = f"{done.stdout}\n{done.stderr}\n--- server log ---\n{server.log_text()[-5000:]}"
    assert done.returncode == 0, report
    for scenario in REQUIRED:
        checks = _checks(results, scenario)
        assert checks, f"{scenario} did not run:\n{report}"
        bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
        assert not bad, f"{scenario}: {bad}"


def test_the_baseline_never_excuses_a_required_scenario() -> None:
    listed = baseline_scenarios()
    assert listed, "the baseline lists no scenario"
    assert not set(REQUIRED) & set(listed)
    assert len(listed) == len(set(listed))


def _checks(results: Path, scenario: str) -> list[dict[str, str]]:
    """The checks of one scenario: the suite writes server-<scenario>-<timestamp>/checks.json."""
    found: list[dict[str, str]] = []
    for path in results.glob("server-*/checks.json"):
        match = RESULT_FOLDER.match(path.parent.name)
        if match is not None and match.group(1) == scenario:
            found.extend(json.loads(path.read_text()))
    return found
