"""The session hooks as the agents run them: `heyaira hooks install` (the pip-installed command,
run from a virtualenv that is not on PATH) writes the configuration, and the test runs the
installed command through a shell with the JSON the agent sends (tests/client/claude_code.py).

A SessionStart hook injects context by printing
{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}. What the
team shares (.claude/settings.json, .mcp.json, AGENTS.md) holds no path of this machine; that
part goes to .claude/settings.local.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest

from heyaira_client import HeyAira
from tests.client.claude_code import (
    absolute_paths,
    installed_command,
    pre_compact_input,
    run_hook,
    session_start_input,
)
from tests.client.conftest import Home, Seat

pytestmark = pytest.mark.live_server

SUMMARIZER = (
    "import sys; prompt = sys.stdin.read(); "
    "print('# Running summary'); print(); "
    "asked = 'build the client' in prompt; "
    "print('- Goal: ' + ('the person asked for a client' if asked else '?')); "
    "print('- Pending: the README.')"
)


def claude_transcript(path: Path) -> Path:
    """A Claude Code transcript: user and assistant entries, a tool call and its result."""
    entries = [
        {"type": "user", "message": {"role": "user", "content": "Please build the client."}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Starting with the journal."},
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "client/"}],
            },
        },
        {"type": "user", "message": {"role": "user", "content": "Keep commits small."}},
        {"type": "assistant", "message": {"role": "assistant", "content": "Understood."}},
    ]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    return path


def test_the_claude_code_hooks_inject_the_brief_and_store_the_running_summary(
    home: Home, seat: Seat, tmp_path: Path, installed_client: Path
):
    seat.saved(home, agent="claude-code", summarizer=(sys.executable, "-c", SUMMARIZER))
    project = tmp_path / "project"
    settings = project / ".claude" / "settings.json"
    local = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    theirs = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"PreToolUse": [theirs]}}))

    mcp_json = project / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"other": {"type": "stdio", "command": "x"}}}))
    for _ in range(2):  # installing again replaces our entries, never duplicates them
        done = home.installed(
            installed_client,
            *("hooks", "install", "claude-code", "--settings", str(settings)),
            *("--mcp-json", str(mcp_json)),
        )
        assert done.returncode == 0, done.stderr
        assert f"wrote {settings}\nwrote {local}" in done.stdout
        assert f"wrote {mcp_json}" in done.stdout
    servers = json.loads(mcp_json.read_text())["mcpServers"]
    assert servers["other"] == {"type": "stdio", "command": "x"}
    assert servers["heyaira"] == {
        "type": "http",
        "url": seat.profile().url,
        "headers": {"Authorization": "Bearer ${HEYAIRA_TEST_KEY}"},
    }
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["PreToolUse"] == [theirs]
    assert len(data["hooks"]["SessionStart"]) == 1
    assert len(data["hooks"]["PreCompact"]) == 1
    assert data["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    command = installed_command(settings, "SessionStart")
    assert command == "heyaira hook claude-code session-start --profile work"

    # The team's files name the command, never this machine's paths; those are local.
    for shared in (settings, mcp_json):
        assert absolute_paths(shared.read_text()) == [], shared
        assert str(tmp_path) not in shared.read_text()
        assert sys.executable not in shared.read_text()
    machine = json.loads(local.read_text())["env"]
    assert machine["PATH"].split(":")[0] == str(installed_client / "bin")
    assert machine["HEYAIRA_PROFILES"] == str(home.profiles)
    assert set(json.loads(local.read_text())) == {"env"}

    # Claude Code runs the hooks without the virtualenv on PATH: the local env supplies it.
    env = {**home.env, "PYTHONPATH": str(installed_client)}
    transcript = claude_transcript(tmp_path / "session.jsonl")
    start = run_hook(command, session_start_input(transcript, project), env, settings, local)
    assert start.returncode == 0, start.stderr
    output = json.loads(start.stdout)
    assert set(output) == {"hookSpecificOutput"}, output
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(f"# HeyAira: {seat.slug.title()} ({seat.slug})")
    assert "## Open tasks (0, 0 ready)" in context
    # Without the local file the command is not found: it is what makes the hook run here.
    assert run_hook(command, session_start_input(transcript, project), env).returncode == 127

    compact = run_hook(
        installed_command(settings, "PreCompact"),
        pre_compact_input(transcript, project),
        {**env, "HEYAIRA_HOOK_WAIT": "1"},
        settings,
        local,
    )
    assert compact.returncode == 0, compact.stderr
    assert compact.stdout == ""

    after = run_hook(
        command, session_start_input(transcript, project, source="compact"), env, settings, local
    )
    context = json.loads(after.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## Running summary (claude-code, v1)" in context
    assert "- Goal: the person asked for a client" in context
    assert "Recovered after compaction" in context


def test_an_earlier_install_with_absolute_paths_is_replaced(
    home: Home, seat: Seat, tmp_path: Path, installed_client: Path
):
    seat.saved(home)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = f"{sys.executable} -m heyaira_client hook claude-code session-start --profile work"
    group = {"matcher": "startup", "hooks": [{"type": "command", "command": old}]}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [group]}}))

    done = home.installed(
        installed_client, "hooks", "install", "claude-code", "--settings", str(settings)
    )

    assert done.returncode == 0, done.stderr
    assert len(json.loads(settings.read_text())["hooks"]["SessionStart"]) == 1
    assert absolute_paths(settings.read_text()) == []


def test_the_users_own_settings_take_this_machines_part_too(
    home: Home, seat: Seat, installed_client: Path
):
    """~/.claude/settings.json is the person's own, on this machine: no settings.local.json
    beside it (Claude Code reads none there); the env goes into the file itself."""
    seat.saved(home)

    done = home.installed(installed_client, "hooks", "install", "claude-code")

    assert done.returncode == 0, done.stderr
    user = Path(home.env["HOME"]) / ".claude" / "settings.json"
    assert done.stdout.strip() == f"wrote {user}"
    data = json.loads(user.read_text())
    assert installed_command(user, "SessionStart").startswith("heyaira hook claude-code")
    assert data["env"]["PATH"].startswith(str(installed_client / "bin"))
    assert not user.with_name("settings.local.json").exists()


def test_the_session_start_hook_fails_open_and_warns_on_a_mismatch(
    home: Home, seat: Seat, tmp_path: Path, installed_client: Path
):
    seat.saved(home, instance="production")
    settings = tmp_path / ".claude" / "settings.json"
    done = home.installed(
        installed_client, "hooks", "install", "claude-code", "--settings", str(settings)
    )
    assert done.returncode == 0, done.stderr

    start = run_hook(
        installed_command(settings, "SessionStart"),
        session_start_input(tmp_path / "none.jsonl", tmp_path),
        {**home.env, "PYTHONPATH": str(installed_client)},
        settings,
        settings.with_name("settings.local.json"),
    )

    assert start.returncode == 0, start.stderr
    output = json.loads(start.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert "server_identity instance is 'live-test'" in context
    assert "Do not write to HeyAira" in context
    assert "server_identity instance is 'live-test'" in output["systemMessage"]


def test_the_codex_setup_writes_the_mcp_server_and_an_agents_md_section(
    home: Home, seat: Seat, tmp_path: Path, installed_client: Path
):
    seat.saved(home)
    config = tmp_path / "codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o4"\n\n[mcp_servers.other]\ncommand = "other-server"\n')
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Agents\n\nRun the tests before committing.\n")

    for _ in range(2):
        done = home.cli(
            *("hooks", "install", "codex", "--config", str(config), "--agents-md", str(agents))
        )
        assert done.returncode == 0, done.stderr

    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "o4"
    assert parsed["mcp_servers"]["other"] == {"command": "other-server"}
    assert parsed["mcp_servers"]["heyaira"] == {
        "url": seat.profile().url,
        "bearer_token_env_var": "HEYAIRA_TEST_KEY",
    }
    assert config.stat().st_mode & 0o777 == 0o600
    text = agents.read_text()
    assert text.startswith("# Agents\n\nRun the tests before committing.\n")
    assert text.count("<!-- heyaira:begin -->") == 1
    assert absolute_paths(text) == []  # AGENTS.md is the team's
    # The command AGENTS.md tells the agent to run, run as written, with heyaira on PATH.
    command = text.split("1. Run `", 1)[1].split("`", 1)[0]
    assert command == "heyaira hook session-start --profile work"
    env = {
        **home.env,
        "PATH": f"{installed_client / 'bin'}:{home.env['PATH']}",
        "PYTHONPATH": str(installed_client),
    }
    brief = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env, timeout=120
    )
    assert brief.returncode == 0, brief.stderr
    assert brief.stdout.startswith(f"# HeyAira: {seat.slug.title()}")


def test_the_shell_hook_prints_the_brief_and_updates_the_summary_in_the_background(
    home: Home, seat: Seat, tmp_path: Path
):
    seat.saved(home, summarizer=(sys.executable, "-c", SUMMARIZER))
    script = tmp_path / "bin" / "heyaira-hook"
    assert home.cli("hooks", "install", "shell", "--path", str(script)).returncode == 0
    assert script.stat().st_mode & 0o111

    start = subprocess.run(
        [str(script), "session-start"], capture_output=True, text=True, env=home.env
    )
    assert start.returncode == 0, start.stderr
    assert start.stdout.startswith(f"# HeyAira: {seat.slug.title()}")

    transcript = tmp_path / "turns.jsonl"
    lines = [{"role": "user", "text": f"Please build the client, step {n}."} for n in range(8)]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    began = time.monotonic()
    turn = subprocess.run([str(script), "turn", str(transcript)], capture_output=True, env=home.env)
    assert turn.returncode == 0
    assert time.monotonic() - began < 30  # returned without waiting for the update

    async def newest() -> Any:
        async with HeyAira(seat.profile()) as heyaira:
            return await heyaira.state_get()

    deadline = time.monotonic() + 90
    state = None
    while state is None and time.monotonic() < deadline:
        state = anyio.run(newest)
        time.sleep(0.5)
    assert state is not None
    assert state.body.startswith("# Running summary\n\n- Goal: the person asked for a client")
