"""The brief `heyaira context` prints (and the session hooks inject) says what it leaves out: a
task waiting on others says so and names what it waits on, instead of passing for a plain todo,
and a list the server cut ends with "… and N more"."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from heyaira_client import HeyAira
from heyaira_client.brief import render_brief
from heyaira_client.models import Context, Identity, Recovery
from tests.client.conftest import Home, Seat

FILLERS = 22  # open tasks waiting on the first one: 23 open, 20 shown by default


async def _tasks(seat: Seat) -> dict[str, str]:
    async with HeyAira(seat.profile()) as heyaira:
        identity = await heyaira.verify()
        context = identity.write_context.as_json()

        async def create(title: str, blocked_by: list[str]) -> str:
            arguments = {"write_context": context, "title": title, "description": title}
            if blocked_by:
                arguments["blocked_by"] = blocked_by
            return str((await heyaira.call("task_create", arguments))["id"])

        first = await create("Build the API", [])
        for number in range(FILLERS):
            await create(f"Ship screen {number}", [first])
    return {"first": first}


@pytest.mark.live_server
def test_the_brief_shows_readiness_and_what_it_leaves_out(home: Home, seat: Seat):
    seat.saved(home)
    ids = anyio.run(_tasks, seat)

    done = home.cli("context")

    assert done.returncode == 0, done.stderr
    brief = done.stdout
    assert "## Open tasks (23, 1 ready)" in brief
    tasks = brief.split("## Open tasks", 1)[1]
    entries = [line for line in tasks.splitlines() if line.startswith("- [")]
    assert len(entries) == 20
    assert entries[0].startswith("- [ready] Build the API")
    waiting = [line for line in entries if line.startswith("- [todo, waiting on 1] Ship screen")]
    assert len(waiting) == 19
    assert f"  waiting on: Build the API (`{ids['first']}`)" in tasks
    assert "- … and 3 more open tasks (`heyaira tasks` lists them)" in tasks
    assert "- [todo]" not in tasks  # no waiting task passes for a plain todo


def _recovery(context: dict[str, Any]) -> Recovery:
    project = {"id": "00000000-0000-4000-8000-000000000001", "slug": "demo", "name": "Demo"}
    identity = {
        "resource": "http://127.0.0.1:8000/mcp",
        "instance": "local",
        "project": project,
        "principal": {"actor": "owner", "role": "owner", "scopes": ["continuity:read"]},
        "write_context": {
            "resource": "http://127.0.0.1:8000/mcp",
            "instance": "local",
            "project": project["id"],
        },
    }
    return Recovery(Identity.of(identity), Context.of({"project": project, **context}))


def _task(number: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": f"00000000-0000-4000-8000-{number:012d}",
        "title": f"Task {number}",
        "status": "todo",
        "version": 1,
        "next_step": "",
        "blocker_count": 0,
        "ready": False,
        "waiting_on_count": 0,
        "waiting_on": [],
        **fields,
    }


def test_a_task_waiting_on_tasks_outside_the_brief_names_them_and_counts_the_rest():
    outside = [f"00000000-0000-4000-8000-0000000009{n:02d}" for n in range(3)]
    brief = render_brief(
        _recovery(
            {
                "tasks": [
                    _task(1, status="in_progress", waiting_on_count=5, waiting_on=outside),
                    _task(2, status="blocked", blocker_count=2),
                ],
                "counts": {"open_tasks": 2, "ready_tasks": 0},
            }
        )
    )
    assert "- [in_progress, waiting on 5] Task 1" in brief
    named = ", ".join(f"`{each}`" for each in outside)
    assert f"  waiting on: {named}, 2 more (`heyaira tasks` shows them)" in brief
    assert "- [blocked] Task 2 (`00000000-0000-4000-8000-000000000002`, v1, 2 blockers)" in brief
    assert "more open tasks" not in brief  # nothing was cut


def test_a_capped_count_says_at_least():
    memories = [
        {"id": f"m{n}", "kind": "decision", "title": f"D{n}", "preview": "p", "created_at": ""}
        for n in range(10)
    ]
    brief = render_brief(
        _recovery(
            {
                "tasks": [_task(n, ready=True) for n in range(20)],
                "memories": memories,
                "counts": {"open_tasks": 10_000, "ready_tasks": 10_000, "decisions": 12},
                "limits": {"counts_capped": ["open_tasks", "ready_tasks"]},
            }
        )
    )
    assert "- … and at least 9,980 more open tasks" in brief
    assert "- … and 2 more decisions (`memory_search` finds them)" in brief
