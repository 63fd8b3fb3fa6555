"""The continuity brief (continuity.brief), the text of the `resume` prompt and of the client's
SessionStart hook: it says what it leaves out. A task waiting on tasks outside the brief names
those it can and counts the rest, a capped count says "at least", and a list cut short says
where the rest is."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from continuity.brief import render_brief
from continuity.outputs import ContextOut, IdentityOut

PROJECT = {"id": "00000000-0000-4000-8000-000000000001", "slug": "demo", "name": "Demo"}
IDENTITY = IdentityOut.model_validate(
    {
        "resource": "http://127.0.0.1:8000/mcp",
        "instance": "local",
        "project": PROJECT,
        "principal": {
            "actor": "owner",
            "role": "owner",
            "scopes": ["continuity:read"],
            "credential": "api_key",
        },
        "write_context": {
            "resource": "http://127.0.0.1:8000/mcp",
            "instance": "local",
            "project": PROJECT["id"],
        },
    }
)
NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
NO_COUNTS = dict.fromkeys(
    ("memories", "decisions", "notes", "tasks", "open_tasks", "ready_tasks", "receipts"), 0
)


def context(**given: Any) -> ContextOut:
    counts = {**NO_COUNTS, "repositories": 0, **given.pop("counts", {})}
    limits = {
        "memory_limit": 10,
        "task_limit": 20,
        "receipt_limit": 10,
        "clamped": {},
        "count_cap": 10_000,
        "counts_capped": [],
        **given.pop("limits", {}),
    }
    fields: dict[str, Any] = {"repositories": [], "memories": [], "tasks": [], "receipts": []}
    fields["state"] = None
    return ContextOut.model_validate(
        {"project": PROJECT, **fields, **given, "counts": counts, "limits": limits}
    )


def task(number: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": f"00000000-0000-4000-8000-{number:012d}",
        "title": f"Task {number}",
        "status": "todo",
        "version": 1,
        "next_step": "",
        "blocker_count": 0,
        "repository_ref": None,
        "ready": False,
        "waiting_on_count": 0,
        "waiting_on": [],
        "lease": None,
        "updated_at": NOW,
        **fields,
    }


def memory(number: int) -> dict[str, Any]:
    return {
        "id": str(uuid.UUID(int=number)),
        "kind": "decision",
        "title": f"D{number}",
        "preview": "p",
        "chars": 1,
        "supersedes": None,
        "created_at": NOW,
    }


def test_it_names_the_server_and_the_actor_and_says_how_to_claim():
    brief = render_brief(IDENTITY, context())
    assert brief.splitlines()[:4] == [
        "# HeyAira: Demo (demo)",
        "",
        "Server `http://127.0.0.1:8000/mcp` (instance `local`), acting as owner (owner; "
        "continuity:read).",
        "Claim a ready task with `task_claim_next`, or `task_update(expected_version=...)`, and "
        "hand over with a work receipt.",
    ]
    assert "## Open tasks (0, 0 ready)\n\n- none\n" in brief


def test_a_task_waiting_on_tasks_outside_the_brief_names_them_and_counts_the_rest():
    outside = [f"00000000-0000-4000-8000-0000000009{n:02d}" for n in range(3)]
    brief = render_brief(
        IDENTITY,
        context(
            tasks=[
                task(1, status="in_progress", waiting_on_count=5, waiting_on=outside),
                task(2, status="blocked", blocker_count=2),
            ],
            counts={"open_tasks": 2, "ready_tasks": 0},
        ),
    )
    assert "- [in_progress, waiting on 5] Task 1" in brief
    named = ", ".join(f"`{each}`" for each in outside)
    assert f"  waiting on: {named}, 2 more (`task_get` shows them)" in brief
    assert "- [blocked] Task 2 (`00000000-0000-4000-8000-000000000002`, v1, 2 blockers)" in brief
    assert "more open tasks" not in brief  # nothing was cut


def test_a_capped_count_says_at_least_and_a_cut_list_says_where_the_rest_is():
    brief = render_brief(
        IDENTITY,
        context(
            tasks=[task(n, ready=True) for n in range(20)],
            memories=[memory(n) for n in range(10)],
            counts={"open_tasks": 10_000, "ready_tasks": 10_000, "decisions": 12},
            limits={"counts_capped": ["open_tasks", "ready_tasks"]},
        ),
    )
    assert "- … and at least 9,980 more open tasks (`task_list` lists them)" in brief
    assert "- … and 2 more decisions (`memory_search` finds them)" in brief


def test_a_lease_says_who_holds_the_task_until_when():
    holder = {"actor": "carla", "session_ref": "claude-code:abc"}
    leased = [
        task(n, status="in_progress", lease={"holder": holder, "expires_at": NOW, "state": state})
        for n, state in enumerate(("live", "expiring", "expired"), start=1)
    ]
    brief = render_brief(IDENTITY, context(tasks=leased, counts={"open_tasks": 3}))
    who = "carla, session `claude-code:abc`"
    assert f"  lease: held by {who} until 2026-12-01T09:30:00.000Z; claimable after" in brief
    assert f"  lease: yours ({who}), expiring at 2026-12-01T09:30:00.000Z: renew it" in brief
    assert "expired at 2026-12-01T09:30:00.000Z: claimable now (`task_claim_next`)" in brief


def test_the_running_summary_comes_first_without_its_heading():
    state = {
        "agent": "codex",
        "version": 3,
        "preview": "# Running summary\n\nGoal: ship it.",
        "chars": 33,
        "created_at": NOW,
    }
    brief = render_brief(IDENTITY, context(state=state))
    assert "\n## Running summary (codex, v3)\n\nGoal: ship it.\n\n## Open tasks" in brief
