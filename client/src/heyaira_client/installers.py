"""What `heyaira hooks install` writes, for Claude Code, Codex and any shell.

Files a team shares (a project's `.claude/settings.json`, `.mcp.json`, `AGENTS.md`) get only
what is the same on every machine: the hook run by its name on PATH (`heyaira hook ...`), the
server's URL, the name of the variable that holds the key. What belongs to this machine (where
the `heyaira` command lives when it is not on PATH, where the profiles file is) goes to Claude
Code's per-machine `.claude/settings.local.json`, whose `env` Claude Code applies to the session
and its hooks; Claude Code keeps that file out of version control.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from heyaira_client.hooks import MARK
from heyaira_client.paths import PROFILES_VARIABLE, write_private
from heyaira_client.profile import Profile, credential_source

COMMAND = "heyaira"  # the console script, found on PATH
AGENTS_BEGIN = "<!-- heyaira:begin -->"
AGENTS_END = "<!-- heyaira:end -->"
# A hook entry written by this installer, now (`heyaira hook claude-code ...`) or by an older
# one (`/abs/python -m heyaira_client hook claude-code ...`).
_OUR_HOOK = re.compile(rf"(^|[\s/]){COMMAND} hook claude-code |{MARK}")


def hook_command(*arguments: str) -> str:
    """A hook's command line by the command's name: the same on every machine."""
    return shlex.join([COMMAND, *arguments])


# --- Claude Code ------------------------------------------------------------------------------


def user_settings_path() -> Path:
    return Path.home() / ".claude" / "settings.json"


def local_settings_for(settings: Path) -> Path:
    """Where machine-specific settings go: `settings.local.json` beside a project's settings; the
    person's own ~/.claude/settings.json is this machine's already."""
    if settings.expanduser().resolve() == user_settings_path().resolve():
        return settings
    return settings.with_name("settings.local.json")


def machine_environment() -> dict[str, str]:
    """The variables a hook needs on this machine, beyond what every machine has: PATH (with
    PYTHONPATH when this installation needs it) when the `heyaira` command is not on PATH, and
    the profiles file when it is not in its default place."""
    env: dict[str, str] = {}
    if shutil.which(COMMAND) is None:
        directory = _script_directory()
        if directory is not None:
            env["PATH"] = os.pathsep.join([str(directory), os.environ.get("PATH", "")])
            if os.environ.get("PYTHONPATH"):
                env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if os.environ.get(PROFILES_VARIABLE):
        env[PROFILES_VARIABLE] = str(Path(os.environ[PROFILES_VARIABLE]).expanduser().resolve())
    return env


def _script_directory() -> Path | None:
    """The directory of this installation's `heyaira` script (a virtualenv's bin/, say)."""
    for candidate in (Path(sys.argv[0]), Path(sys.executable).with_name(COMMAND)):
        if candidate.name == COMMAND and candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.resolve().parent
    return None


def install_claude_code(
    profile: Profile,
    settings: Path | None = None,
    mcp_json: Path | None = None,
    local_settings: Path | None = None,
) -> list[Path]:
    """Our SessionStart and PreCompact hooks in the settings file (replacing earlier ones; every
    other setting and hook stays), this machine's part in the local settings file, and with
    `mcp_json` the `heyaira` MCP server in that file."""
    path = settings or user_settings_path()
    local = local_settings or local_settings_for(path)
    data = _read_json(path)
    hooks = data.setdefault("hooks", {})
    ours = {
        "SessionStart": ("startup|resume|clear|compact", "session-start"),
        "PreCompact": ("manual|auto", "pre-compact"),
        # Activity renews the session's leases (only those due reach the server); the end of
        # the session hands back what it still holds.
        "PostToolUse": ("*", "post-tool-use"),
        "SessionEnd": ("*", "session-end"),
    }
    for event, (matcher, name) in ours.items():
        groups = [g for g in hooks.get(event, []) if not _is_ours(g)]
        command = hook_command("hook", "claude-code", name, "--profile", profile.name)
        groups.append({"matcher": matcher, "hooks": [{"type": "command", "command": command}]})
        hooks[event] = groups
    _write_json(path, data)
    written = [path]
    machine = machine_environment()
    if machine:
        local_data = data if local == path else _read_json(local)
        local_data.setdefault("env", {}).update(machine)
        _write_json(local, local_data)
        if local != path:
            written.append(local)
    if mcp_json is not None:
        written.append(install_mcp_json(profile, mcp_json))
    return written


def install_mcp_json(profile: Profile, path: Path) -> Path:
    """The `heyaira` entry of a Claude Code `.mcp.json`. An env: credential becomes a
    `${VARIABLE}` header that Claude Code expands, so the key itself never lands in the file;
    an OAuth profile gets no header (Claude Code signs in itself, from `/mcp`)."""
    data = _read_json(path)
    server: dict[str, Any] = {"type": "http", "url": profile.url}
    source = credential_source(profile)
    if source.kind == "env":
        server["headers"] = {"Authorization": f"Bearer ${{{source.where}}}"}
    data.setdefault("mcpServers", {})["heyaira"] = server
    _write_json(path, data)
    return path


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _is_ours(group: Any) -> bool:
    entries = group.get("hooks", []) if isinstance(group, dict) else []
    return any(_OUR_HOOK.search(str(entry.get("command", ""))) for entry in entries)


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
    """AGENTS.md is the team's: the command by its name, never this machine's paths."""
    brief = hook_command("hook", "session-start", "--profile", profile.name)
    return "\n".join(
        [
            AGENTS_BEGIN,
            "## HeyAira (durable project state)",
            "",
            f"This repository's decisions, tasks and handoffs live in HeyAira (profile "
            f"`{profile.name}`, the `heyaira` MCP server). At the start of every session:",
            "",
            f"1. Run `{brief}` and read the brief (it checks the server's identity first; if "
            "it says HeyAira is not available, work without writing to it).",
            "2. Claim a task with `task_claim_next(session_ref)` or `task_update(expected_version"
            "=..., status='in_progress', session_ref)` before working on it; keep its lease with "
            "`task_heartbeat` (or `heyaira heartbeat`) while you work.",
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
    """A script for one machine (it runs this installation's interpreter, wherever PATH
    points): both commands exit 0 whatever HeyAira does."""
    program = shlex.join([sys.executable, "-m", MARK])
    base = f"{program} hook"
    name = shlex.quote(profile.name)
    return "\n".join(
        [
            "#!/bin/sh",
            "# HeyAira hook for any harness (written by `heyaira hooks install shell`).",
            "#   heyaira-hook session-start       print the brief (Markdown) to stdout, or a",
            "#                                    warning when HeyAira cannot be used",
            "#   heyaira-hook turn TRANSCRIPT     after a turn: update the running summary if due",
            "#                                    (JSONL of {role, text}); returns at once",
            "#   heyaira-hook heartbeat           renew HEYAIRA_SESSION_REF's leases that are due",
            "set -eu",
            'case "${1:-}" in',
            f"  session-start) exec {base} session-start --profile {name} ;;",
            f'  turn) exec {base} turn --profile {name} --transcript "$2" ;;',
            f"  heartbeat) exec {program} heartbeat --if-due --profile {name} ;;",
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
    lines = []
    for path in paths:
        note = ""
        if path.name == "settings.local.json":
            note = " (this machine's part: keep it out of version control)"
        lines.append(f"wrote {path}{note}")
    return "\n".join(lines)
