"""The Claude Code hooks keep a session's lease and let it go, run as Claude Code runs them
(the installed command through a shell, the event's JSON on stdin: tests/client/claude_code.py).

The agent (played by the SDK on the seat's key) claims through the MCP tool with the session_ref
the brief gave it; PostToolUse notes the claim from the tool's response and, on later activity,
renews the lease once a third of it has gone by; it tells the agent when the lease was lost;
SessionEnd hands back what the session still holds. The client's own bookkeeping of when it
last renewed is aged by hand to make a heartbeat due; the server's clock is never touched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from heyaira_client import HeyAira, LeaseBook
from tests.client.claude_code import (
    installed_command,
    post_tool_use_input,
    run_hook,
    session_end_input,
    session_start_input,
)
from tests.client.conftest import Home, Seat

pytestmark = pytest.mark.live_server

SESSION = "claude-code:abc123"  # what the brief names for session_id abc123


async def claim_as_the_agent(seat: Seat) -> dict[str, Any]:
    """task_claim_next through MCP, as the model calls it: its structured result."""
    async with HeyAira(seat.profile()) as heyaira:
        identity = await heyaira.verify()
        await heyaira.task_create(title="Hooked work", description="Kept alive by the hooks.")
        arguments = {
            "write_context": identity.write_context.as_json(),
            "session_ref": SESSION,
            "lease_seconds": 30,
        }
        return await heyaira.call("task_claim_next", arguments)


def age(home: Home, seconds: float) -> None:
    """Move this machine's record of the last renewal back (the client's bookkeeping only)."""
    path = home.state / "leases.json"
    data = json.loads(path.read_text())
    for leases in data.values():
        for lease in leases.values():
            lease["beat_at"] -= seconds
    path.write_text(json.dumps(data))


def lease_row(seat: Seat, task_id: str) -> list[Any]:
    return list(
        seat.rows(
            f"from continuity.models import Task\nt = Task.objects.get(pk={task_id!r})\n"
            "result = [t.status, t.lease_session_ref, "
            "t.lease_expires_at and t.lease_expires_at.isoformat(), t.version]"
        )
    )


def test_the_claude_code_hooks_renew_a_claimed_lease_report_its_loss_and_release_it(
    home: Home, seat: Seat, tmp_path: Path, installed_client: Path
):
    seat.saved(home)
    project = tmp_path / "project"
    settings = project / ".claude" / "settings.json"
    local = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    done = home.installed(
        installed_client, "hooks", "install", "claude-code", "--settings", str(settings)
    )
    assert done.returncode == 0, done.stderr
    env = {**home.env, "PYTHONPATH": str(installed_client)}
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")

    def hook(event: str, payload: dict[str, Any]) -> Any:
        answer = run_hook(installed_command(settings, event), payload, env, settings, local)
        assert answer.returncode == 0, answer.stderr
        return answer

    # The brief tells the agent which session_ref to name.
    start = hook("SessionStart", session_start_input(transcript, project))
    assert SESSION in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]

    result = anyio.run(claim_as_the_agent, seat)
    task_id = result["task"]["id"]
    content = [{"type": "text", "text": json.dumps(result)}]
    claimed = post_tool_use_input(
        transcript, project, "mcp__heyaira__task_claim_next", {"session_ref": SESSION}, content
    )
    assert hook("PostToolUse", claimed).stdout == ""  # noted; nothing due yet
    assert list(LeaseBook().held("work", SESSION)) == [task_id]
    before = lease_row(seat, task_id)

    # Later activity, a third of the lease on: the hook renews it; the version stays.
    age(home, 11)
    bash = post_tool_use_input(transcript, project, "Bash", {"command": "ls"}, {"stdout": ""})
    assert hook("PostToolUse", bash).stdout == ""
    after = lease_row(seat, task_id)
    assert after[0:2] == ["in_progress", SESSION]
    assert after[2] > before[2]
    assert after[3] == before[3]
    assert seat.outcomes("task_heartbeat") == ["success"]

    # An owner releases the lease; the next due renewal finds it lost and tells the agent.
    seat.rows(
        "from continuity.services import task_lease_release\n"
        "from projects.callers import operator_caller\n"
        f"task_lease_release(operator_caller(project), task_id={task_id!r})"
    )
    age(home, 11)
    lost = json.loads(hook("PostToolUse", bash).stdout)["hookSpecificOutput"]
    assert lost["hookEventName"] == "PostToolUse"
    assert f"your lease on task {task_id} was lost" in lost["additionalContext"]
    assert LeaseBook().held("work", SESSION) == {}

    # Claimed again, then the session ends without a handoff: the hook hands the task back.
    again = anyio.run(claim_again, seat)
    content = [{"type": "text", "text": json.dumps(again)}]
    hook(
        "PostToolUse",
        post_tool_use_input(transcript, project, "mcp__heyaira__task_claim_next", {}, content),
    )
    assert hook("SessionEnd", session_end_input(transcript, project)).stdout == ""
    status, session, expires, _ = lease_row(seat, task_id)
    assert (status, session, expires) == ("todo", "", None)
    assert LeaseBook().held("work", SESSION) == {}


async def claim_again(seat: Seat) -> dict[str, Any]:
    async with HeyAira(seat.profile()) as heyaira:
        identity = await heyaira.verify()
        arguments = {"write_context": identity.write_context.as_json(), "session_ref": SESSION}
        return await heyaira.call("task_claim_next", arguments)
