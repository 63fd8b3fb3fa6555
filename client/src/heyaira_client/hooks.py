"""Session hooks for the agents people use, and what `heyaira hooks install` writes.

- Claude Code: a `SessionStart` hook that prints the brief as
  `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}`, and a
  `PreCompact` hook that stores the running summary from the session's transcript. Installed
  into a settings file (`~/.claude/settings.json`, or a project's `.claude/settings.json`).
- Codex: the MCP server in `~/.codex/config.toml` and a section in `AGENTS.md` that tells the
  agent to start with `heyaira context` (Codex has no session-start hook to run it).
- Any other harness: a shell script with `session-start` (prints the brief) and `turn` (the
  running summary's after-turn check on a JSONL transcript).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio

from heyaira_client.brief import render_brief
from heyaira_client.errors import HeyAiraClientError
from heyaira_client.paths import write_private
from heyaira_client.profile import Profile, credential_source
from heyaira_client.session import HeyAira
from heyaira_client.summary import CommandSummarizer, RunningSummary, Turn

WAIT_VARIABLE = "HEYAIRA_HOOK_WAIT"  # 1: the PreCompact hook waits for its update (tests)
MARK = "heyaira_client"  # how our entries are recognised when installing again
AGENTS_BEGIN = "<!-- heyaira:begin -->"
AGENTS_END = "<!-- heyaira:end -->"


def command_for(*arguments: str) -> str:
    """The command line a hook runs: this interpreter with this package, so it works whatever
    PATH the agent gives its hooks."""
    return shlex.join([sys.executable, "-m", MARK, *arguments])


# --- Claude Code ------------------------------------------------------------------------------


async def _brief(profile: Profile) -> str:
    async with HeyAira(profile) as heyaira:
        return render_brief(await heyaira.recover())


def session_start_output(profile: Profile, hook_input: dict[str, Any]) -> dict[str, Any]:
    """The SessionStart answer. It fails open: when HeyAira cannot be reached or is not the
    pinned server, the session starts anyway and is told not to write there."""
    try:
        context = anyio.run(_brief, profile)
    except HeyAiraClientError as error:
        context = (
            f"HeyAira (profile {profile.name}) is not available in this session: {error}\n"
            "Do not write to HeyAira until `heyaira whoami` succeeds."
        )
    source = hook_input.get("source")
    if source == "compact":
        context += "\n(Recovered after compaction: the running summary above is the newest.)\n"
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def claude_transcript_turns(path: Path) -> list[Turn]:
    """Person and agent text turns from a Claude Code transcript (JSONL). Tool calls and tool
    results are not turns."""
    turns: list[Turn] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return turns
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind not in ("user", "assistant"):
            continue
        text = _text_of((entry.get("message") or {}).get("content"))
        if text:
            turns.append(Turn("person" if kind == "user" else "agent", text))
    return turns


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if p).strip()
    return ""


def jsonl_turns(path: Path) -> list[Turn]:
    """A generic transcript: one {"role": "person"|"agent"|"user"|"assistant", "text"} a line."""
    turns: list[Turn] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        person = entry.get("role") in ("person", "user")
        turns.append(Turn("person" if person else "agent", str(entry.get("text", ""))))
    return turns


def summary_for(profile: Profile) -> RunningSummary:
    if not profile.summarizer:
        raise HeyAiraClientError(
            f"profile {profile.name} has no summarizer command (summarizer = [...])"
        )
    return RunningSummary(profile, CommandSummarizer(profile.summarizer))


def run_summary(profile: Profile, turns: list[Turn], *, force: bool, wait: bool) -> bool:
    summary = summary_for(profile)
    started = summary.after_turn(turns, force=force)
    if started and wait:
        summary.wait()
        if summary.last_error:
            raise HeyAiraClientError(f"the running summary was not updated: {summary.last_error}")
    return started


def pre_compact(profile: Profile, hook_input: dict[str, Any]) -> None:
    """Store the running summary before Claude Code compacts. The update runs in a detached
    process so that compaction is not held up, unless HEYAIRA_HOOK_WAIT=1."""
    transcript = str(hook_input.get("transcript_path") or "")
    if not transcript:
        return
    arguments = ["summary", "update", "--profile", profile.name, "--claude-transcript", transcript]
    if os.environ.get(WAIT_VARIABLE) == "1":
        turns = claude_transcript_turns(Path(transcript))
        run_summary(profile, turns, force=True, wait=True)
        return
    subprocess.Popen(  # noqa: S603 (this package, this interpreter)
        [sys.executable, "-m", MARK, *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def claude_settings_path(settings: Path | None) -> Path:
    return settings or Path.home() / ".claude" / "settings.json"


def install_claude_code(
    profile: Profile, settings: Path | None = None, mcp_json: Path | None = None
) -> list[Path]:
    """Add (or replace) our SessionStart and PreCompact hooks in a Claude Code settings file;
    every other setting and hook in it stays as it was. With `mcp_json`, also the `heyaira`
    MCP server in that file (a project's `.mcp.json`)."""
    path = claude_settings_path(settings)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    hooks = data.setdefault("hooks", {})
    ours = {
        "SessionStart": ("startup|resume|clear|compact", "session-start"),
        "PreCompact": ("manual|auto", "pre-compact"),
    }
    for event, (matcher, name) in ours.items():
        groups = [g for g in hooks.get(event, []) if not _is_ours(g)]
        command = command_for("hook", "claude-code", name, "--profile", profile.name)
        groups.append({"matcher": matcher, "hooks": [{"type": "command", "command": command}]})
        hooks[event] = groups
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return [path] if mcp_json is None else [path, install_mcp_json(profile, mcp_json)]


def install_mcp_json(profile: Profile, path: Path) -> Path:
    """The `heyaira` entry of a Claude Code `.mcp.json`. An env: credential becomes a
    `${VARIABLE}` header that Claude Code expands, so the key itself never lands in the file;
    an OAuth profile gets no header (Claude Code signs in itself, from `/mcp`)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    server: dict[str, Any] = {"type": "http", "url": profile.url}
    source = credential_source(profile)
    if source.kind == "env":
        server["headers"] = {"Authorization": f"Bearer ${{{source.where}}}"}
    data.setdefault("mcpServers", {})["heyaira"] = server
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _is_ours(group: Any) -> bool:
    entries = group.get("hooks", []) if isinstance(group, dict) else []
    return any(MARK in str(entry.get("command", "")) for entry in entries)


# --- Codex --------------------------------------------------------------------------------------


def codex_config_path(config: Path | None) -> Path:
    return config or Path.home() / ".codex" / "config.toml"


def install_codex(
    profile: Profile, config: Path | None = None, agents_md: Path | None = None
) -> list[Path]:
    """The MCP server in Codex's config.toml (its own table, replaced if there) and our
    section in AGENTS.md (between markers, replaced if there)."""
    path = codex_config_path(config)
    table = [
        "[mcp_servers.heyaira]",
        f"url = {json.dumps(profile.url)}",
    ]
    source = credential_source(profile)
    if source.kind == "env":
        table.append(f"bearer_token_env_var = {json.dumps(source.where)}")
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    text = _replace_toml_table(text, "mcp_servers.heyaira", "\n".join(table) + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    # config.toml may hold other servers' settings: keep it the person's own.
    write_private(path, text)
    agents = agents_md or Path("AGENTS.md")
    agents_text = agents.read_text(encoding="utf-8") if agents.exists() else ""
    agents.write_text(_replace_section(agents_text, agents_section(profile)), encoding="utf-8")
    return [path, agents]


def _replace_toml_table(text: str, name: str, table: str) -> str:
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skipping = False
    for line in lines:
        header = re.match(r"^\s*\[([^\[\]]+)\]\s*$", line)
        if header:
            skipping = header.group(1).strip() == name
        if not skipping:
            out.append(line)
    body = "".join(out).rstrip("\n")
    return (body + "\n\n" if body else "") + table


def agents_section(profile: Profile) -> str:
    context = command_for("context", "--profile", profile.name)
    return "\n".join(
        [
            AGENTS_BEGIN,
            "## HeyAira (durable project state)",
            "",
            f"This repository's decisions, tasks and handoffs live in HeyAira (profile "
            f"`{profile.name}`, the `heyaira` MCP server). At the start of every session:",
            "",
            f"1. Run `{context}` and read the brief (it checks the server's identity first).",
            "2. Claim a task with `task_update(expected_version=...)` before working on it.",
            "3. Record decisions with `memory_add` (rationale and source) and notes as you go.",
            "4. Hand over with `task_update` carrying a `work_receipt` (summary, tests, commits).",
            "",
            "If `server_identity` does not match the profile, do not write to HeyAira.",
            AGENTS_END,
            "",
        ]
    )


def _replace_section(text: str, section: str) -> str:
    pattern = re.compile(re.escape(AGENTS_BEGIN) + r".*?" + re.escape(AGENTS_END) + r"\n?", re.S)
    if pattern.search(text):
        return pattern.sub(lambda _: section, text)
    return (text.rstrip("\n") + "\n\n" if text.strip() else "") + section


# --- any shell ------------------------------------------------------------------------------


def shell_hook(profile: Profile) -> str:
    base = shlex.join([sys.executable, "-m", MARK])
    return "\n".join(
        [
            "#!/bin/sh",
            "# HeyAira hook for any harness (written by `heyaira hooks install shell`).",
            "#   heyaira-hook session-start       print the brief (Markdown) to stdout",
            "#   heyaira-hook turn TRANSCRIPT     after a turn: update the running summary if due",
            "#                                    (JSONL of {role, text}); returns at once",
            "set -eu",
            'case "${1:-}" in',
            f"  session-start) exec {base} context --profile {shlex.quote(profile.name)} ;;",
            f"  turn) exec {base} summary turn --profile {shlex.quote(profile.name)} "
            '--transcript "$2" ;;',
            '  *) echo "usage: $0 session-start | turn TRANSCRIPT" >&2; exit 2 ;;',
            "esac",
            "",
        ]
    )


def install_shell(profile: Profile, path: Path) -> list[Path]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(shell_hook(profile), encoding="utf-8")
    path.chmod(0o755)
    return [path]


def installed(paths: Iterable[Path]) -> str:
    return "\n".join(f"wrote {path}" for path in paths)
