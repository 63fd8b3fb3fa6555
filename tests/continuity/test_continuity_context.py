"""continuity_context: the bounded recovery index a new session reads once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from continuity.models import StateVersion
from continuity.selectors import continuity_context, state_get
from continuity.services import state_put
from core.access import Caller
from tests.continuity.helpers import (
    add_decision,
    add_note,
    as_json,
    last_audit,
    new_task,
    receipt,
    rejected,
    update_task,
)
from tests.factories import World, wc


def _summary(caller: Caller, agent: str, line: str) -> None:
    state_put(caller, write_context=wc(caller), agent=agent, body=f"# Running summary\n- {line}")


def test_it_returns_every_part_for_a_fresh_session(world: World) -> None:
    owner = world.caller("owner")
    old = add_decision(owner, "Use SQLite.")
    new = add_decision(owner, "Use PostgreSQL in production.", supersedes=old["id"], title="DB")
    note = add_note(owner, "first line\n\nsecond   line")
    task = new_task(owner, "Ship", next_step="Write tests", status="in_progress")
    updated = update_task(
        owner,
        task,
        blockers=["a", "b"],
        repository_ref={"repository": "acme/app", "branch": "main", "commit": "abc1234"},
        work_receipt=receipt(
            "s-1",
            tests=[
                {"name": "a", "result": "passed"},
                {"name": "b", "result": "passed"},
                {"name": "c", "result": "failed"},
            ],
            commits=["abc1234"],
        ),
    )
    _summary(owner, "codex", "goal: ship")

    context = as_json(continuity_context(world.caller("viewer")))

    assert set(context) == {
        "project",
        "repositories",
        "memories",
        "tasks",
        "receipts",
        "state",
        "limits",
        "counts",
    }
    assert context["project"] == {"id": str(world.alpha.pk), "slug": "alpha", "name": "Alpha"}
    assert context["repositories"] == [
        {
            "repository": "acme/app",
            "provider": "github",
            "default_branch": "main",
            "url": "https://github.com/acme/app",
        }
    ]
    assert [m["id"] for m in context["memories"]] == [note["id"], new["id"], old["id"]]
    assert context["memories"][0]["preview"] == "first line second line"
    assert context["memories"][0]["chars"] == len("first line\n\nsecond   line")
    assert context["memories"][1] == {
        "id": new["id"],
        "kind": "decision",
        "title": "DB",
        "preview": "Use PostgreSQL in production.",
        "chars": len("Use PostgreSQL in production."),
        "supersedes": old["id"],
        "created_at": new["created_at"],
    }
    assert context["tasks"] == [
        {
            "id": task["id"],
            "title": "Ship",
            "status": "in_progress",
            "version": 2,
            "next_step": "Write tests",
            "blocker_count": 2,
            "repository_ref": {"repository": "acme/app", "branch": "main", "commit": "abc1234"},
            "ready": False,
            "waiting_on_count": 0,
            "waiting_on": [],
            "updated_at": updated["task"]["updated_at"],
            # The claim's lease: it named no session_ref, so it is the actor's.
            "lease": {
                "holder": {"actor": "olivia", "session_ref": ""},
                "expires_at": updated["task"]["lease"]["expires_at"],
                "state": "live",
            },
        }
    ]
    (only_receipt,) = context["receipts"]
    assert only_receipt == {
        "id": updated["receipt"]["id"],
        "task_id": task["id"],
        "session_ref": "s-1",
        "summary": "Wrote the tests.",
        "tests": {"passed": 2, "failed": 1},
        "commit_count": 1,
        "created_at": updated["receipt"]["created_at"],
    }
    assert context["state"]["agent"] == "codex"
    assert context["state"]["preview"] == "# Running summary\n- goal: ship"
    assert context["limits"] == {
        "memory_limit": 10,
        "task_limit": 20,
        "receipt_limit": 10,
        "clamped": {},
        "count_cap": 10_000,
        "counts_capped": [],
    }
    assert context["counts"] == {
        "memories": 3,
        "decisions": 2,
        "notes": 1,
        "tasks": 1,
        "open_tasks": 1,
        "ready_tasks": 0,
        "receipts": 1,
        "repositories": 1,
    }
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "continuity_context",
        "success",
        "project",
        str(world.alpha.pk),
    )


def test_it_lists_only_open_tasks_newest_first(world: World) -> None:
    owner = world.caller("owner")
    todo = new_task(owner, "todo")
    blocked = new_task(owner, "blocked", status="blocked")
    done = new_task(owner, "done", status="in_progress")
    update_task(owner, done, status="done")
    cancelled = new_task(owner, "cancelled")
    update_task(owner, cancelled, status="cancelled")
    update_task(owner, todo, next_step="touched last")
    context = as_json(continuity_context(owner))
    assert [t["title"] for t in context["tasks"]] == ["todo", "blocked"]
    assert [t["id"] for t in context["tasks"]] == [todo["id"], blocked["id"]]
    assert (context["counts"]["tasks"], context["counts"]["open_tasks"]) == (4, 2)


def test_it_returns_the_newest_summary_of_any_agent_or_of_the_one_asked(world: World) -> None:
    owner = world.caller("owner")
    _summary(owner, "codex", "codex one")
    _summary(owner, "claude", "claude one")
    _summary(owner, "codex", "codex two")
    _summary(owner, "claude", "claude two")
    newest = as_json(continuity_context(owner))["state"]
    assert (newest["agent"], newest["version"]) == ("claude", 2)
    codex = as_json(continuity_context(owner, agent="codex"))["state"]
    assert (codex["agent"], codex["version"], codex["preview"]) == (
        "codex",
        2,
        "# Running summary\n- codex two",
    )
    assert as_json(continuity_context(owner, agent="nobody"))["state"] is None


def test_an_agents_newest_summary_is_its_highest_version_whatever_the_clocks_said(
    world: World,
) -> None:
    """Versions are numbered by the database; created_at comes from the clock of whichever app
    server wrote the row. With two servers a little apart, version 2 can carry the earlier time:
    continuity_context must still show the version state_get shows."""
    owner = world.caller("owner")
    _summary(owner, "codex", "first")
    _summary(owner, "codex", "second")
    first = StateVersion.objects.get(agent="codex", version=1)
    StateVersion.objects.filter(agent="codex", version=2).update(
        created_at=first.created_at - timedelta(seconds=2)
    )
    assert as_json(state_get(owner, agent="codex"))["state"]["version"] == 2
    assert as_json(continuity_context(owner, agent="codex"))["state"]["version"] == 2


def test_it_applies_the_limits_and_reports_clamped_asks(world: World) -> None:
    owner = world.caller("owner")
    for n in range(4):
        add_note(owner, f"note {n}")
        task = new_task(owner, f"task {n}")
        update_task(owner, task, work_receipt=receipt(f"s-{n}"))
    small = as_json(continuity_context(owner, memory_limit=2, task_limit=3, receipt_limit=1))
    assert [len(small[k]) for k in ("memories", "tasks", "receipts")] == [2, 3, 1]
    assert [m["preview"] for m in small["memories"]] == ["note 3", "note 2"]
    none = as_json(continuity_context(owner, memory_limit=0, task_limit=0, receipt_limit=0))
    assert [none[k] for k in ("memories", "tasks", "receipts")] == [[], [], []]
    big = as_json(continuity_context(owner, memory_limit=51, task_limit=1000, receipt_limit=50))
    assert big["limits"] == {
        "memory_limit": 50,
        "task_limit": 100,
        "receipt_limit": 50,
        "clamped": {"memory_limit": 51, "task_limit": 1000},
        "count_cap": 10_000,
        "counts_capped": [],
    }


def test_memory_previews_are_one_line_of_at_most_280_characters(world: World) -> None:
    owner = world.caller("owner")
    add_note(owner, "word\n" * 3000)
    (memory,) = as_json(continuity_context(owner))["memories"]
    assert len(memory["preview"]) == 280
    assert memory["preview"].endswith("…")
    assert "\n" not in memory["preview"]
    assert memory["chars"] == 15_000


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"memory_limit": -1}, "memory_limit"),
        ({"task_limit": 1_000_001}, "task_limit"),
        ({"receipt_limit": 2**64}, "receipt_limit"),
        ({"receipt_limit": "5"}, "receipt_limit"),
        ({"memory_limit": 2.0}, "memory_limit"),
        ({"agent": "no spaces please"}, "agent"),
        ({"depth": 3}, "depth"),
    ],
)
def test_it_rejects_bad_arguments(world: World, arguments: dict[str, Any], field: str) -> None:
    error = rejected("validation_error", continuity_context, world.caller("viewer"), **arguments)
    assert list(error.details["fields"]) == [field]


def test_counts_stop_at_the_cap_and_say_which_did(world: World) -> None:
    """Counting is bounded too: beyond 10,000 a count reports the cap and names itself."""
    from continuity.models import Memory

    owner = world.caller("owner")
    Memory.objects.bulk_create(
        Memory(project=world.alpha, kind="note", content=f"n{n}", author="bulk")
        for n in range(10_001)
    )
    context = as_json(continuity_context(owner))
    assert context["counts"]["memories"] == 10_000
    assert context["counts"]["notes"] == 10_000
    assert context["counts"]["decisions"] == 0
    assert context["limits"]["counts_capped"] == ["memories", "notes"]
