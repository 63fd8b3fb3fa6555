"""Every hook fails open: with the server down (a closed port), slow (a real local server that
does not answer in time) or answering an error (a real local server that says 500, 503, 401,
403 or something that is not JSON), each hook (Claude Code's SessionStart and PreCompact, the
command AGENTS.md gives Codex, the shell hook) exits 0 with the documented warning and prints
no traceback. The hooks are installed and run as the agents run them (tests/client/claude_code.py).
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from heyaira_client import Profile, save_profile
from heyaira_client.hooks import DEFAULT_TIMEOUT, hook_timeout
from tests.client.claude_code import (
    installed_command,
    pre_compact_input,
    run_hook,
    session_start_input,
)
from tests.client.conftest import Home
from tests.live import once_in_ci

pytestmark = once_in_ci(
    "the hooks meet faulty servers and closed ports, never the app or a database"
)

WARNING = "HeyAira (profile faulty) is not available in this session: "
NOT_WRITE = "Do not write to HeyAira until `heyaira whoami` succeeds."
HOOK_TIMEOUT = "2"  # seconds; the slow server holds its answer far longer
# The servers that answer at once get a wide margin: a loaded CI machine may take seconds just to
# start the hook's interpreter, and their warning must name the answer, not a timeout.
ANSWERING_TIMEOUT = "30"
HELD_SECONDS = 120


@dataclass
class Fault:
    name: str
    status: int  # 0: never answers in time
    body: bytes
    reason: str  # what the warning must say


FAULTS = [
    Fault("slow", 0, b"", f"within {HOOK_TIMEOUT} s"),
    Fault("500", 500, b'{"error": "boom"}', "answered HTTP 500"),
    Fault("503", 503, b'{"error": {"code": "unavailable"}}', "answered HTTP 503"),
    Fault("401", 401, b'{"error": "unauthenticated"}', "refused the credential"),
    Fault("403", 403, b'{"error": "forbidden"}', "refused the credential"),
    Fault("malformed", 200, b"<html>not json", "server_identity: "),
]


class _FaultyHandler(BaseHTTPRequestHandler):
    fault: Fault
    released: threading.Event

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.fault.status == 0:
            self.released.wait(HELD_SECONDS)  # slow: hold the answer
            return
        self.send_response(self.fault.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.fault.body)))
        self.end_headers()
        self.wfile.write(self.fault.body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def faulty_url(request: pytest.FixtureRequest, live_processes: None) -> Iterator[str]:
    """The MCP URL of a real HTTP server on 127.0.0.1 with the fault, or of a closed port."""
    fault: Fault | None = request.param
    if fault is None:
        with socket.socket() as probe:  # a port nothing listens on once closed
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        yield f"http://127.0.0.1:{port}/mcp"
        return
    released = threading.Event()
    handler = type("Handler", (_FaultyHandler,), {"fault": fault, "released": released})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        released.set()
        server.shutdown()
        server.server_close()


CASES = [pytest.param(None, "cannot connect to", id="down")] + [
    pytest.param(fault, fault.reason, id=fault.name) for fault in FAULTS
]


def _profile(home: Home, url: str, reason: str) -> None:
    save_profile(
        Profile(
            name="faulty",
            url=url,
            instance="local",
            project="demo",
            credential="env:HEYAIRA_FAULT_KEY",
        ),
        make_default=True,
    )
    home.env["HEYAIRA_FAULT_KEY"] = "hak_0123456789ab_" + "x" * 43
    slow = reason == FAULTS[0].reason
    home.env["HEYAIRA_HOOK_TIMEOUT"] = HOOK_TIMEOUT if slow else ANSWERING_TIMEOUT


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    """Exit 0, and nothing a person should never see."""
    assert done.returncode == 0, done.stderr
    for text in (done.stdout, done.stderr):
        assert "Traceback" not in text
        assert "ExceptionGroup" not in text
        assert "Error(" not in text  # no exception repr either


@pytest.mark.parametrize(("faulty_url", "reason"), CASES, indirect=["faulty_url"])
def test_the_claude_code_hooks_exit_0_with_the_warning(
    home: Home, tmp_path: Path, installed_client: Path, faulty_url: str, reason: str
):
    _profile(home, faulty_url, reason)
    settings = tmp_path / ".claude" / "settings.json"
    local = settings.with_name("settings.local.json")
    done = home.installed(
        installed_client, "hooks", "install", "claude-code", "--settings", str(settings)
    )
    assert done.returncode == 0, done.stderr
    env = {**home.env, "PYTHONPATH": str(installed_client)}

    start = run_hook(
        installed_command(settings, "SessionStart"),
        session_start_input(tmp_path / "t.jsonl", tmp_path),
        env,
        settings,
        local,
    )
    _clean(start)
    output = json.loads(start.stdout)
    context = output["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(WARNING)
    assert reason in context.splitlines()[0]
    assert NOT_WRITE in context
    assert output["systemMessage"] == context.splitlines()[0]  # the person sees it too

    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type": "user", "message": {"content": "hello"}}\n')
    compact = run_hook(
        installed_command(settings, "PreCompact"),
        pre_compact_input(transcript, tmp_path),
        env,
        settings,
        local,
    )
    _clean(compact)
    message = json.loads(compact.stdout)["systemMessage"]
    assert message.startswith("HeyAira (profile faulty): the running summary was not stored")
    assert reason in message


@pytest.mark.parametrize(("faulty_url", "reason"), CASES, indirect=["faulty_url"])
def test_the_codex_and_shell_hooks_exit_0_with_the_warning(
    home: Home, tmp_path: Path, installed_client: Path, faulty_url: str, reason: str
):
    _profile(home, faulty_url, reason)
    agents = tmp_path / "AGENTS.md"
    script = tmp_path / "bin" / "heyaira-hook"
    for agent, where in (("codex", "--agents-md"), ("shell", "--path")):
        target = agents if agent == "codex" else script
        extra = ["--config", str(tmp_path / "codex.toml")] if agent == "codex" else []
        done = home.installed(
            installed_client, "hooks", "install", agent, where, str(target), *extra
        )
        assert done.returncode == 0, done.stderr
    codex_command = agents.read_text().split("1. Run `", 1)[1].split("`", 1)[0]
    on_path = {
        **home.env,
        "PATH": f"{installed_client / 'bin'}:{home.env['PATH']}",
        "PYTHONPATH": str(installed_client),
    }

    for command in (codex_command, f"{script} session-start"):
        done = subprocess.run(
            ["bash", "-c", command],
            capture_output=True,
            text=True,
            env=on_path,
            timeout=120,
            check=False,
        )
        _clean(done)
        assert done.stdout.startswith(WARNING), command
        assert reason in done.stdout.splitlines()[0], command
        assert NOT_WRITE in done.stdout, command


def test_the_hook_timeout_is_a_few_seconds_unless_set(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("HEYAIRA_HOOK_TIMEOUT", raising=False)
    assert hook_timeout() == DEFAULT_TIMEOUT == 10.0
    monkeypatch.setenv("HEYAIRA_HOOK_TIMEOUT", "1.5")
    assert hook_timeout() == 1.5
    assert hook_timeout(3.0) == 3.0  # the flag wins
    monkeypatch.setenv("HEYAIRA_HOOK_TIMEOUT", "soon")
    assert hook_timeout() == DEFAULT_TIMEOUT  # a hook never fails over its own setting
