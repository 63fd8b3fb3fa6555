"""What the session hooks do when an agent runs them (`heyaira hook ...`); installers.py writes
the configuration that runs them.

- Claude Code: `SessionStart` prints the brief as
  `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}`;
  `PreCompact` stores the running summary from the session's transcript.
- Codex and any other harness: `heyaira hook session-start` prints the brief as Markdown, and
  `heyaira hook turn` runs the running summary's after-turn check in the background.

Every hook fails open: when the server is unreachable, slow (HEYAIRA_HOOK_TIMEOUT, default 10 s),
answers an error or is not the pinned server, or the profile is missing, the hook still exits 0
and says so in one warning, never with a traceback. A session must start whatever HeyAira does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from heyaira_client.errors import HeyAiraClientError, ToolError
from heyaira_client.failures import describe
from heyaira_client.leases import LeaseBook, RenewPass, lease_length, renew_due
from heyaira_client.profile import Profile, load_profile
from heyaira_client.summary import CommandSummarizer, RunningSummary, Turn

if TYPE_CHECKING:  # the MCP SDK loads only when a connection is made
    from heyaira_client.session import HeyAira

SESSION_REF_VARIABLE = "HEYAIRA_SESSION_REF"
WAIT_VARIABLE = "HEYAIRA_HOOK_WAIT"  # 1: the PreCompact hook waits for its update (tests)
TIMEOUT_VARIABLE = "HEYAIRA_HOOK_TIMEOUT"
DEFAULT_TIMEOUT = 10.0  # seconds a hook waits for HeyAira, all calls together
MARK = "heyaira_client"  # the package, as `python -m heyaira_client`

T = TypeVar("T")


class HookFailure(Exception):
    """Why a hook could not do its work: one line, for the warning."""


def hook_timeout(given: float | None = None) -> float:
    """The flag, else HEYAIRA_HOOK_TIMEOUT, else the default; a malformed value is ignored (a
    hook must not fail over its own setting)."""
    if given is not None and given > 0:
        return given
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE, ""))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def unavailable_warning(profile_name: str, reason: str) -> str:
    """The documented warning (client/README.md): the session goes on, without HeyAira. The
    reason is cut to its first line (a malformed answer's parser error runs to several)."""
    lines = reason.strip().splitlines() or ["unknown"]
    reason = lines[0][:300]
    return (
        f"HeyAira (profile {profile_name}) is not available in this session: {reason}\n"
        "Do not write to HeyAira until `heyaira whoami` succeeds."
    )


def _profile(name: str | None) -> Profile:
    try:
        return load_profile(name)
    except HeyAiraClientError as error:
        raise HookFailure(str(error)) from None


def within(profile: Profile, timeout: float, work: Callable[[HeyAira], Awaitable[T]]) -> T:
    """`work` on a connection to the profile's server, all of it within `timeout` seconds; any
    failure becomes a HookFailure naming the cause."""

    from heyaira_client.session import HeyAira

    async def body() -> T:
        with anyio.fail_after(timeout):
            async with HeyAira(profile, timeout=timeout) as heyaira:
                return await work(heyaira)

    try:
        return anyio.run(body)
    except Exception as error:  # any failure: the hook fails open
        raise HookFailure(describe(error, url=profile.url, timeout=timeout)) from None


def brief(profile_name: str | None, timeout: float) -> tuple[str, bool]:
    """The brief, or the warning in its place; and whether it is the brief."""
    name = profile_name or os.environ.get("HEYAIRA_PROFILE") or "(default)"
    try:
        profile = _profile(profile_name)
        name = profile.name

        async def resume(heyaira: HeyAira) -> str:
            return await heyaira.resume_brief()

        return within(profile, timeout, resume), True
    except HookFailure as failure:
        return unavailable_warning(name, str(failure)) + "\n", False
    except Exception as error:  # a bug of ours must not stop a session
        return unavailable_warning(
            name, f"the client failed ({type(error).__name__})"
        ) + "\n", False


# --- Claude Code ------------------------------------------------------------------------------


def session_start_output(
    profile_name: str | None, hook_input: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """The SessionStart answer: the brief as additional context, or the warning there and as a
    systemMessage (shown to the person) when HeyAira cannot be used."""
    context, ok = brief(profile_name, timeout)
    if hook_input.get("source") == "compact":
        context += "\n(Recovered after compaction: the running summary above is the newest.)\n"
    session_ref = claude_session_ref(hook_input)
    if ok and session_ref is not None:
        context += session_ref_line(session_ref)
    answer: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}
    }
    if not ok:
        answer["systemMessage"] = context.splitlines()[0]
    return answer


def pre_compact(
    profile_name: str | None, hook_input: dict[str, Any], timeout: float
) -> dict[str, Any] | None:
    """Store the running summary before Claude Code compacts. The server is checked first (within
    the timeout); the update itself runs in a detached process so that compaction is not held
    up, unless HEYAIRA_HOOK_WAIT=1. Returns a systemMessage when the summary cannot be stored."""
    transcript = str(hook_input.get("transcript_path") or "")
    name = profile_name or os.environ.get("HEYAIRA_PROFILE") or "(default)"
    try:
        profile = _profile(profile_name)
        name = profile.name
        if not transcript:
            return None
        if os.environ.get(WAIT_VARIABLE) == "1":
            turns = claude_transcript_turns(Path(transcript))
            run_summary(profile, turns, force=True, wait=True)
            return None
        within(profile, timeout, lambda heyaira: heyaira.verify())
    except (HookFailure, HeyAiraClientError) as failure:
        reason = str(failure)
    except Exception as error:  # fail open
        reason = f"the client failed ({type(error).__name__})"
    else:
        detach("summary", "update", "--profile", profile.name, "--claude-transcript", transcript)
        return None
    return {
        "systemMessage": f"HeyAira (profile {name}): the running summary was not stored before "
        f"compaction: {reason}"
    }


def detach(*arguments: str) -> None:
    """Run `heyaira ARGUMENTS` in a process of its own that outlives the hook."""
    subprocess.Popen(  # noqa: S603 (this package, this interpreter)
        [sys.executable, "-m", MARK, *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def after_turn(profile_name: str | None, transcript: str) -> str | None:
    """Any harness, after a turn: the summary's check and update in the background. Returns a
    warning when it cannot even start."""
    try:
        profile = _profile(profile_name)
    except HookFailure as failure:
        return unavailable_warning(profile_name or "(default)", str(failure))
    detach("summary", "update", "--if-due", "--profile", profile.name, "--transcript", transcript)
    if os.environ.get(SESSION_REF_VARIABLE):
        # Activity: renew this session's leases that are due, in the background too.
        detach("heartbeat", "--if-due", "--profile", profile.name)
    return None


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


# --- leases: renewed on activity, let go at the end ------------------------------------------

CLAUDE_SESSION_PREFIX = "claude-code:"


def claude_session_ref(hook_input: dict[str, Any]) -> str | None:
    """The session_ref of a Claude Code session: its session_id, which every hook receives, so
    the brief can name it and the later hooks find the leases it holds."""
    session_id = hook_input.get("session_id")
    return (
        f"{CLAUDE_SESSION_PREFIX}{session_id}"
        if isinstance(session_id, str) and session_id
        else None
    )


def session_ref_line(session_ref: str) -> str:
    return (
        f"\nYour session_ref: `{session_ref}`. Name it in task_claim_next and task_update; "
        "HeyAira's hooks renew your lease while you work and hand the task back if the session "
        "ends without a handoff.\n"
    )


def _found_task(value: Any) -> dict[str, Any] | None:
    """The task in a tool's response, however the harness wraps it (structured content, a
    text part holding the JSON, the JSON as a string)."""
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith("{") and not text.startswith("["):
            return None
        try:
            return _found_task(json.loads(text))
        except ValueError:
            return None
    if isinstance(value, dict):
        task = value.get("task")
        if isinstance(task, dict) and "id" in task and "status" in task:
            return task
        return next((t for t in map(_found_task, value.values()) if t is not None), None)
    if isinstance(value, list):
        return next((t for t in map(_found_task, value) if t is not None), None)
    return None


def note_tool_result(
    book: LeaseBook, profile: str, session_ref: str, hook_input: dict[str, Any]
) -> None:
    """After a HeyAira tool call: a claim whose lease this session holds goes into the book; a
    move out of in_progress (its lease ended) comes out of it."""
    name = str(hook_input.get("tool_name") or "")
    if not name.endswith(("task_claim_next", "task_update")):
        return
    task = _found_task(hook_input.get("tool_response"))
    if task is None:
        return
    lease = task.get("lease") or {}
    holder = (lease.get("holder") or {}).get("session_ref")
    if task.get("status") == "in_progress" and holder == session_ref:
        book.record(profile, session_ref, str(task["id"]), lease_length(lease))
    elif task.get("status") != "in_progress":
        book.forget(profile, session_ref, str(task["id"]))


def post_tool_use(
    profile_name: str | None, hook_input: dict[str, Any], timeout: float
) -> dict[str, Any] | None:
    """Claude Code's PostToolUse (activity): note a claim or handoff just made, then renew this
    session's leases that are due. Quiet unless a lease was lost: then the agent is told."""
    session_ref = claude_session_ref(hook_input)
    if session_ref is None:
        return None
    try:
        profile = _profile(profile_name)
        book = LeaseBook()
        note_tool_result(book, profile.name, session_ref, hook_input)
        if not book.due(profile.name, session_ref):
            return None

        async def renew(heyaira: HeyAira) -> RenewPass:
            await heyaira.verify()
            return await renew_due(heyaira, book, profile.name, session_ref)

        done = within(profile, timeout, renew)
    except (HookFailure, HeyAiraClientError, Exception):  # fail open: the next call tries again
        return None
    if not done.lost:
        return None
    lost = ", ".join(done.lost)
    return {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": f"HeyAira: your lease on task {lost} was lost (taken over or "
            "released). Stop working on it; task_get it to see who holds it now.",
        }
    }


def session_end(profile_name: str | None, hook_input: dict[str, Any], timeout: float) -> None:
    """Claude Code's SessionEnd: a task this session still holds goes back to todo, so that the
    next session can claim it at once instead of waiting for the lease to run out."""
    session_ref = claude_session_ref(hook_input)
    if session_ref is None:
        return
    try:
        profile = _profile(profile_name)
        book = LeaseBook()
        held = list(book.held(profile.name, session_ref))
        if not held:
            return

        async def release(heyaira: HeyAira) -> None:
            await heyaira.verify()
            for task_id in held:
                await release_own(heyaira, task_id, session_ref)
                book.forget(profile.name, session_ref, task_id)

        within(profile, timeout, release)
    except Exception:
        return


async def release_own(heyaira: HeyAira, task_id: str, session_ref: str) -> bool:
    """Hand a task this session holds back to todo (its lease ends); False when it holds it no
    longer (handed over already, or taken over)."""
    task = (await heyaira.task_get(task_id)).task
    holder = ((task.raw.get("lease") or {}).get("holder") or {}).get("session_ref")
    if task.status != "in_progress" or holder != session_ref:
        return False
    try:
        await heyaira.task_update(
            task_id,
            expected_version=task.version,
            status="todo",
            handoff_note="The session ended without a handoff; its lease was released.",
            session_ref=session_ref,
        )
    except ToolError as error:
        if error.code in ("stale_version", "lease_held", "lease_lost"):
            return False
        raise
    return True
