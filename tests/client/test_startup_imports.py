"""A `heyaira` command that sends nothing does not load the MCP SDK.

Claude Code runs the PostToolUse hook after every tool call, and waits for it. With nothing due
it sends nothing, so it must not pay for loading the MCP SDK and httpx (about 0.7 s of CPU, most
of the command's start-up). Each command below runs as its own process with `-X importtime`,
which names every module it loads; a command that connects is the control: it does load them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.client.conftest import Home
from tests.live import once_in_ci

pytestmark = once_in_ci("the client alone, against no server")

# Nothing listens on port 9 (discard) here: a command that connects fails at once.
PROFILE = ("profile", "add", "work", "--url", "http://127.0.0.1:9/mcp", "--instance", "x")
PROFILE_REST = ("--project", "p", "--credential", "env:HEYAIRA_TEST_KEY", "--default")
ANOTHER_TOOLS_RESULT = {"session_id": "s1", "tool_name": "Bash", "tool_input": {}}
CONNECTION_MODULES = ("mcp", "httpx2")


def loaded_packages(home: Home, *args: str, stdin: str = "") -> set[str]:
    """The top-level packages `heyaira ARGS` loaded (the exit status does not matter here)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "heyaira_client", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**home.env, "HEYAIRA_TEST_KEY": "not-a-key"},
        timeout=120,
        check=False,
    )
    names = (line.rpartition("|")[2].strip() for line in done.stderr.splitlines())
    return {name.split(".")[0] for name in names if name}


@pytest.fixture
def profiled(home: Home, live_processes: None) -> Home:
    added = home.cli(*PROFILE, *PROFILE_REST)
    assert added.returncode == 0, added.stderr
    return home


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("--help",), ""),
        (("hook", "claude-code", "post-tool-use"), json.dumps(ANOTHER_TOOLS_RESULT)),
        (("heartbeat", "--if-due", "--session-ref", "s1"), ""),
        (("hooks", "install", "shell", "--path", "{root}/hook.sh"), ""),
    ],
    ids=["help", "post-tool-use-nothing-due", "heartbeat-nothing-due", "hooks-install"],
)
def test_a_command_that_sends_nothing_loads_no_mcp_sdk(
    profiled: Home, args: tuple[str, ...], stdin: str
) -> None:
    args = tuple(arg.format(root=profiled.root) for arg in args)
    loaded = loaded_packages(profiled, *args, stdin=stdin)
    assert "heyaira_client" in loaded
    assert not loaded & set(CONNECTION_MODULES), sorted(loaded & set(CONNECTION_MODULES))


def test_a_command_that_connects_loads_it(profiled: Home) -> None:
    loaded = loaded_packages(profiled, "whoami")
    assert set(CONNECTION_MODULES) <= loaded
