"""Claude Code as the hook tests play it: the JSON it sends a hook, and how it runs one.

The inputs are the examples of Claude Code's hook reference (code.claude.com/docs/en/hooks):
common fields session_id, transcript_path, cwd, hook_event_name; SessionStart adds source
(startup|resume|clear|compact) and model; PreCompact adds trigger (manual|auto) and
custom_instructions. A command hook runs through a shell with the event's JSON on stdin, in an
environment that carries the `env` of every settings file Claude Code reads (the shared
`.claude/settings.json` and this machine's `.claude/settings.local.json`).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any


def session_start_input(transcript: Path, cwd: Path, source: str = "startup") -> dict[str, Any]:
    return {
        "session_id": "abc123",
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": source,
        "model": "claude-sonnet-4-6",
    }


def pre_compact_input(transcript: Path, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": "abc123",
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": "PreCompact",
        "trigger": "manual",
        "custom_instructions": "",
    }


def installed_command(settings: Path, event: str) -> str:
    """Our one hook of `event` in a settings file."""
    data = json.loads(settings.read_text())
    (group,) = [g for g in data["hooks"][event] if "heyaira hook" in json.dumps(g)]
    (hook,) = group["hooks"]
    assert hook["type"] == "command"
    return str(hook["command"])


def settings_env(*files: Path) -> dict[str, str]:
    """The `env` of the settings files that exist, later files winning (as Claude Code merges
    them: local over shared)."""
    env: dict[str, str] = {}
    for path in files:
        if path.exists():
            env.update(json.loads(path.read_text()).get("env", {}))
    return env


def run_hook(
    command: str, payload: dict[str, Any], env: dict[str, str], *settings: Path
) -> subprocess.CompletedProcess[str]:
    """As Claude Code runs a command hook: through a shell, the event's JSON on stdin, with the
    settings files' `env` over the environment it was started in."""
    return subprocess.run(
        ["bash", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**env, **settings_env(*settings)},
        timeout=120,
        check=False,
    )


# A path from the root or the home directory: a "/" or "~/" that starts a word (a URL's slashes
# follow a ":" or a word character, so URLs do not count).
_ABSOLUTE = re.compile(r"(?<![\w.:/~])(?:/|~/)[\w.-]+(?:/[\w.-]+)*")


def absolute_paths(text: str) -> list[str]:
    """The absolute paths in a file's text: what must never land in a file the team shares."""
    return _ABSOLUTE.findall(text)


def post_tool_use_input(
    transcript: Path, cwd: Path, tool_name: str, tool_input: dict[str, Any], tool_response: Any
) -> dict[str, Any]:
    """PostToolUse: the tool's name (an MCP tool's is mcp__<server>__<tool>), its input and its
    response (an MCP tool's content blocks)."""
    return {
        "session_id": "abc123",
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": "PostToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_response": tool_response,
    }


def session_end_input(
    transcript: Path, cwd: Path, reason: str = "prompt_input_exit"
) -> dict[str, Any]:
    return {
        "session_id": "abc123",
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": "SessionEnd",
        "reason": reason,
    }
