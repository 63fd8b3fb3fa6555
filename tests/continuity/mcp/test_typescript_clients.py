"""The official TypeScript-side clients against the real server, as their users run them.

The TypeScript SDK 1.x (`@modelcontextprotocol/sdk`), the 2.x client
(`@modelcontextprotocol/client`, in both protocol eras) and the Inspector CLI 2.x each run the
scenario of tests/continuity/mcp/clients/scenario.mjs over Streamable HTTP with an API key: list
the tools, call every tool, then provoke every pinned error code a client can provoke. Each must
receive every result, and every error as a tool error (isError with the pinned code,
current_version, fields), never as an exception: SDK 1.x and the Inspector validate an error's
structuredContent against the tool's outputSchema, so a schema that describes only success turns
every error into `-32602 Structured content does not match the tool's output schema`.

The packages and Node 22 come from scripts/install_conformance.sh (pinned by
scripts/conformance/package-lock.json); without them these tests are skipped, except in CI.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from continuity.mcp.tools import TOOLS
from tests.continuity.mcp import node_tools
from tests.live import REPO, LiveServer, start_live_server, stop_live_server

pytestmark = [pytest.mark.live_server, pytest.mark.conformance]

CLIENTS_DIR = Path(__file__).with_name("clients")
PASSWORD = "typescript-clients-password-0123456789"
# Every pinned code a client can provoke with its own key (unauthenticated is HTTP 401 before
# MCP; unavailable needs the database down).
PINNED_ERRORS = (
    "stale_version",
    "not_found",
    "validation_error",
    "invalid_transition",
    "duplicate_receipt",
    "idempotency_conflict",
    "write_context_mismatch",
    "forbidden",
)
# A guard, not the expected time: a run takes 1-3 s (SDKs) and 9-35 s (Inspector, one process
# per call) on this 2-core machine.
RUN_TIMEOUT = 90


@dataclass(frozen=True)
class ClientRun:
    script: str
    era: str
    needs: Path


CLIENTS = {
    "sdk-1.x": ClientRun("ts_sdk_client.mjs", "legacy", node_tools.SDK),
    "sdk-2.x-legacy": ClientRun("ts_sdk2_client.mjs", "legacy", node_tools.SDK2_CLIENT),
    "sdk-2.x-auto": ClientRun("ts_sdk2_client.mjs", "auto", node_tools.SDK2_CLIENT),
    "inspector-legacy": ClientRun("inspector_client.mjs", "legacy", node_tools.INSPECTOR),
    "inspector-auto": ClientRun("inspector_client.mjs", "auto", node_tools.INSPECTOR),
}


@dataclass
class Project:
    server: LiveServer
    owner_key: str
    viewer_key: str


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """One real server for the module: an owner and a viewer of one project, a key each."""
    node_tools.require()
    server, pg_name = start_live_server(tmp_path_factory.mktemp("typescript"), access_log=False)
    try:
        server.add_person("tess", PASSWORD, "tsclients", "owner")
        server.add_person("vera", PASSWORD, "tsclients", "viewer")
        keys = {
            who: server.manage("create_api_key", "tsclients", "--user", who)
            .strip()
            .splitlines()[-1]
            for who in ("tess", "vera")
        }
        yield Project(server=server, owner_key=keys["tess"], viewer_key=keys["vera"])
    finally:
        stop_live_server(server, pg_name)


def run_client(project: Project, name: str, home: Path) -> tuple[list[dict[str, Any]], str]:
    """The client's JSON lines, and a report (its stderr, the server's log) for failures."""
    client = CLIENTS[name]
    env = {
        **node_tools.env_with_node(),
        "HOME": str(home),  # the Inspector keeps state in ~/.mcp-inspector: not the real home
        "HEYAIRA_MCP_URL": project.server.mcp_url,
        "HEYAIRA_API_KEY": project.owner_key,
        "HEYAIRA_VIEWER_API_KEY": project.viewer_key,
        "HEYAIRA_RUN": name,
        "HEYAIRA_ERA": client.era,
        "HEYAIRA_NODE_TOOLS": str(node_tools.DIRECTORY),
    }
    done = subprocess.run(
        [str(node_tools.NODE), str(CLIENTS_DIR / client.script)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    # The server logs at DEBUG: keep what went wrong there (warnings, errors, tracebacks).
    serious = [
        line
        for line in project.server.log_text().splitlines()
        if " DEBUG " not in line and " INFO " not in line and not line.startswith("INFO:")
    ]
    report = (
        f"client exit {done.returncode}; its stderr:\n{done.stderr[-3000:]}"
        f"\n--- server warnings and errors ---\n" + "\n".join(serious[-40:])
    )
    assert done.returncode == 0, report
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return lines, report


def failures(lines: list[dict[str, Any]]) -> list[str]:
    """Every call that did not get what it should, one readable line each."""
    problems = []
    for line in lines:
        if line.get("exception") is not None:
            exception = line["exception"]
            problems.append(
                f"{line['step']}: threw {exception['name']} {exception['code']}: "
                f"{exception['message'][:200]}"
            )
            continue
        if "expect" not in line:
            continue
        if line["expect"] == "success":
            if line["isError"]:
                problems.append(f"{line['step']}: tool error {line['error']}")
        elif not line["isError"] or line["code"] != line["expect"]:
            problems.append(f"{line['step']}: got isError={line['isError']} code={line['code']}")
        if not line["text_matches"]:
            problems.append(f"{line['step']}: the text content is not the structuredContent")
    return problems


@pytest.mark.parametrize("name", list(CLIENTS))
def test_the_client_calls_every_tool_and_reads_every_pinned_error(
    project: Project, name: str, tmp_path: Path
) -> None:
    node_tools.require(CLIENTS[name].needs)
    lines, report = run_client(project, name, tmp_path)
    by_step = {line["step"]: line for line in lines}

    problems = failures(lines)
    if problems:
        listing = "\n  ".join(problems)
        pytest.fail(f"{name}: {len(problems)} calls went wrong:\n  {listing}\n{report}", False)
    for step in ("tools/list", "tools/list (viewer)"):
        assert sorted(by_step[step]["tools"]) == sorted(TOOLS), by_step[step]
    called = {line["tool"] for line in lines if line.get("expect") == "success"}
    assert called == set(TOOLS)
    provoked = [line["expect"] for line in lines if line.get("expect", "success") != "success"]
    assert sorted(provoked) == sorted(PINNED_ERRORS)

    # What a client acts on, read from the client's own result objects.
    assert by_step["stale_version"]["error"]["current_version"] == 2
    assert set(by_step["validation_error"]["error"]["fields"]) == {"rationale", "source"}
    assert by_step["write_context_mismatch"]["error"]["mismatched"] == ["instance"]
    assert by_step["invalid_transition"]["error"]["from_status"] == "todo"
    # The 2.x client and the Inspector speak the era asked for (auto: the 2026-07-28 one).
    if CLIENTS[name].script != "ts_sdk_client.mjs":
        wanted = "modern" if CLIENTS[name].era == "auto" else "legacy"
        assert by_step["era"]["era"] == wanted


def test_the_pinned_client_versions_are_the_ones_installed() -> None:
    node_tools.require(node_tools.SDK, node_tools.SDK2_CLIENT, node_tools.INSPECTOR)
    wanted = json.loads((REPO / "scripts" / "conformance" / "package.json").read_text())
    for package, path in (
        ("@modelcontextprotocol/sdk", node_tools.SDK),
        ("@modelcontextprotocol/client", node_tools.SDK2_CLIENT),
        ("@modelcontextprotocol/inspector", node_tools.INSPECTOR),
    ):
        installed = json.loads((path / "package.json").read_text())["version"]
        assert installed == wanted["dependencies"][package], package
    done = subprocess.run(
        [str(node_tools.NODE), "--version"], capture_output=True, text=True, check=True
    )
    major, minor = (int(part) for part in done.stdout.strip().lstrip("v").split(".")[:2])
    assert (major, minor) >= (22, 19), "the Inspector needs Node >= 22.19"
