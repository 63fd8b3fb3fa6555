"""Task status moves (docs/architecture.md): todo -> in_progress | blocked | cancelled;
in_progress -> blocked | done | todo | cancelled; blocked -> in_progress | todo | cancelled;
done and cancelled are final."""

from __future__ import annotations

from typing import Any

import pytest

from continuity.models import Task, WorkReceipt
from core.access import Caller
from tests.continuity.helpers import (
    last_audit,
    new_task,
    receipt,
    update_rejected,
    update_task,
)
from tests.factories import World

STATUSES = ("todo", "in_progress", "blocked", "done", "cancelled")
ALLOWED = {
    "todo": {"in_progress", "blocked", "cancelled"},
    "in_progress": {"blocked", "done", "todo", "cancelled"},
    "blocked": {"in_progress", "todo", "cancelled"},
    "done": set(),
    "cancelled": set(),
}
MOVES = [(a, b) for a in STATUSES for b in STATUSES if a != b]


def _task_in(caller: Caller, status: str) -> dict[str, Any]:
    """A task brought to `status` through allowed moves, with its current version."""
    if status in ("todo", "in_progress", "blocked"):
        return new_task(caller, status=status)
    task = new_task(caller, status="in_progress")
    result = update_task(caller, task, status=status)
    return result["task"]


@pytest.mark.parametrize(("source", "target"), [(a, b) for a, b in MOVES if b in ALLOWED[a]])
def test_an_allowed_move_changes_the_status(world: World, source: str, target: str) -> None:
    owner = world.caller("owner")
    task = _task_in(owner, source)
    result = update_task(owner, task, status=target)
    assert (result["task"]["status"], result["task"]["version"]) == (target, task["version"] + 1)
    assert Task.objects.get(pk=task["id"]).status == target


@pytest.mark.parametrize(("source", "target"), [(a, b) for a, b in MOVES if b not in ALLOWED[a]])
def test_a_refused_move_is_an_invalid_transition_and_changes_nothing(
    world: World, source: str, target: str
) -> None:
    owner = world.caller("owner")
    task = _task_in(owner, source)
    before = Task.objects.values().get(pk=task["id"])
    error = update_rejected(
        "invalid_transition",
        owner,
        task,
        expected_version=task["version"],
        status=target,
        work_receipt=receipt(),
    )
    assert error.message == f"A task cannot move from {source} to {target}."
    assert error.details == {
        "from_status": source,
        "to_status": target,
        "allowed": sorted(ALLOWED[source]),
    }
    assert Task.objects.values().get(pk=task["id"]) == before
    assert not WorkReceipt.objects.exists()
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        "task_update",
        "rejected",
        "invalid_transition",
    )


def test_the_table_is_the_whole_design_table() -> None:
    """Every pair of distinct statuses is either allowed or refused, none both."""
    allowed = [(a, b) for a, b in MOVES if b in ALLOWED[a]]
    assert len(allowed) == 10
    assert len(MOVES) - len(allowed) == 10


@pytest.mark.parametrize("status", ["todo", "in_progress", "blocked"])
def test_naming_the_current_open_status_is_not_a_move(world: World, status: str) -> None:
    owner = world.caller("owner")
    task = _task_in(owner, status)
    result = update_task(owner, task, status=status, next_step="same status, new step")
    assert (result["task"]["status"], result["task"]["version"]) == (status, 2)


@pytest.mark.parametrize("final", ["done", "cancelled"])
@pytest.mark.parametrize(
    "changes",
    [
        {"next_step": "reopen it"},
        {"handoff_note": "one more thing"},
        {"blockers": ["x"]},
        {"work_receipt": receipt("after-the-end")},
    ],
    ids=["next_step", "handoff_note", "blockers", "work_receipt"],
)
def test_a_final_task_takes_no_more_updates(
    world: World, final: str, changes: dict[str, Any]
) -> None:
    owner = world.caller("owner")
    task = _task_in(owner, final)
    before = Task.objects.values().get(pk=task["id"])
    error = update_rejected(
        "invalid_transition",
        owner,
        task,
        expected_version=task["version"],
        **changes,
    )
    assert error.details["allowed"] == []
    assert Task.objects.values().get(pk=task["id"]) == before
    assert not WorkReceipt.objects.exists()


def test_a_status_that_does_not_exist_is_a_validation_error(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    error = update_rejected(
        "validation_error",
        owner,
        task,
        expected_version=1,
        status="open",
    )
    assert list(error.details["fields"]) == ["status"]
