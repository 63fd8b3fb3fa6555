"""blocked_by: a task waits on tasks of its own project, set on task_create and replaced on
task_update; an unknown or foreign id is not_found, a cycle is a validation_error naming the
field, and a refusal leaves nothing behind. Ready = todo with every dependency done."""

from __future__ import annotations

import uuid
from typing import Any

from continuity.models import Task, TaskDependency
from continuity.selectors import continuity_context, task_get, task_list
from continuity.services import task_create
from tests.continuity.helpers import (
    as_json,
    audit_rows,
    new_task,
    rejected,
    update_rejected,
    update_task,
)
from tests.factories import World, wc


def _edges() -> set[tuple[str, str]]:
    return {
        (str(task), str(blocked_by))
        for task, blocked_by in TaskDependency.objects.values_list("task_id", "blocked_by_id")
    }


def _current(caller: Any, task: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = as_json(task_get(caller, task_id=task["id"]))["task"]
    return found


def _finish(caller: Any, task: dict[str, Any]) -> None:
    moved = update_task(caller, _current(caller, task), status="in_progress")["task"]
    update_task(caller, moved, status="done")


def test_it_creates_a_task_blocked_by_others_and_shows_them_everywhere(world: World) -> None:
    owner = world.caller("owner")
    schema, api = new_task(owner, "schema"), new_task(owner, "api")
    ui = new_task(owner, "ui", blocked_by=[api["id"], schema["id"], api["id"]])

    assert _edges() == {(ui["id"], schema["id"]), (ui["id"], api["id"])}
    full = as_json(task_get(world.caller("viewer"), task_id=ui["id"]))["task"]
    assert (full["blocked_by"], full["ready"]) == (sorted([schema["id"], api["id"]]), False)
    listed = {t["title"]: t for t in as_json(task_list(owner))["tasks"]}
    assert (listed["ui"]["blocked_by"], listed["ui"]["ready"]) == (full["blocked_by"], False)
    assert (listed["api"]["blocked_by"], listed["api"]["ready"]) == ([], True)
    entry = next(t for t in as_json(continuity_context(owner))["tasks"] if t["id"] == ui["id"])
    assert (entry["ready"], entry["waiting_on_count"]) == (False, 2)
    assert sorted(entry["waiting_on"]) == full["blocked_by"]


def test_it_is_not_ready_while_a_dependency_is_open_and_ready_once_all_are_done(
    world: World,
) -> None:
    owner = world.caller("owner")
    first, second = new_task(owner, "first"), new_task(owner, "second")
    last = new_task(owner, "last", blocked_by=[first["id"], second["id"]])

    def ready_titles() -> list[str]:
        return [t["title"] for t in as_json(task_list(owner, status="ready"))["tasks"]]

    assert ready_titles() == ["second", "first"]
    _finish(owner, first)
    assert ready_titles() == ["second"]
    assert _current(owner, last)["ready"] is False
    # Cancelled is not done: the dependency still holds the task back.
    update_task(owner, _current(owner, second), status="cancelled")
    assert ready_titles() == []
    update_task(owner, _current(owner, last), blocked_by=[first["id"]])
    assert ready_titles() == ["last"]
    assert _current(owner, last)["ready"] is True
    assert as_json(continuity_context(owner))["counts"]["ready_tasks"] == 1


def test_a_task_that_is_not_todo_is_never_ready(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    moved = update_task(owner, task, status="in_progress")["task"]
    assert moved["ready"] is False
    assert as_json(task_list(owner, status="ready"))["tasks"] == []


def test_task_update_replaces_the_set_and_grows_the_version(world: World) -> None:
    owner = world.caller("owner")
    a, b, c = (new_task(owner, name) for name in "abc")
    task = new_task(owner, "t", blocked_by=[a["id"], b["id"]])
    result = update_task(owner, task, blocked_by=[b["id"], c["id"]])["task"]
    assert result["version"] == 2
    assert result["blocked_by"] == sorted([b["id"], c["id"]])
    assert _edges() == {(task["id"], b["id"]), (task["id"], c["id"])}
    cleared = update_task(owner, result, blocked_by=[])["task"]
    assert (cleared["blocked_by"], cleared["ready"], cleared["version"]) == ([], True, 3)
    assert _edges() == set()


def test_an_update_without_blocked_by_keeps_the_set(world: World) -> None:
    owner = world.caller("owner")
    dependency = new_task(owner, "dependency")
    task = new_task(owner, "t", blocked_by=[dependency["id"]])
    result = update_task(owner, task, next_step="later")["task"]
    assert result["blocked_by"] == [dependency["id"]]


def test_it_rejects_an_unknown_or_foreign_id_as_not_found_and_keeps_nothing(
    world: World,
) -> None:
    owner = world.caller("owner")
    foreign = new_task(world.caller("outsider"), "beta's task")
    mine = new_task(owner, "mine")
    for missing in (foreign["id"], str(uuid.uuid4())):
        tasks_before = Task.objects.count()
        error = rejected(
            "not_found",
            task_create,
            owner,
            write_context=wc(owner),
            title="t",
            description="d",
            blocked_by=[mine["id"], missing],
        )
        # The same answer for both: another project's task does not exist here.
        assert error.message == "No such task in this project (blocked_by)."
        assert Task.objects.count() == tasks_before
        update_rejected("not_found", owner, mine, blocked_by=[missing])
    assert _edges() == set()
    assert Task.objects.get(pk=mine["id"]).version == 1
    assert [(e.outcome, e.error_code) for e in audit_rows(world.alpha, "task_create")][-2:] == [
        ("rejected", "not_found"),
        ("rejected", "not_found"),
    ]


def test_it_refuses_a_cycle_through_three_tasks(world: World) -> None:
    owner = world.caller("owner")
    a = new_task(owner, "a")
    b = new_task(owner, "b", blocked_by=[a["id"]])
    c = new_task(owner, "c", blocked_by=[b["id"]])

    error = update_rejected("validation_error", owner, a, blocked_by=[c["id"]])

    assert list(error.details["fields"]) == ["blocked_by"]
    assert error.details["fields"]["blocked_by"] == (
        f"would make a cycle: task {c['id']} is already blocked, directly or through others, "
        "by this task"
    )
    assert _edges() == {(b["id"], a["id"]), (c["id"], b["id"])}
    assert Task.objects.get(pk=a["id"]).version == 1
    event = audit_rows(world.alpha, "task_update")[-1]
    assert (event.outcome, event.error_code, event.target_id) == (
        "rejected",
        "validation_error",
        a["id"],
    )


def test_it_refuses_a_task_blocked_by_itself_and_a_two_task_cycle(world: World) -> None:
    owner = world.caller("owner")
    a = new_task(owner, "a")
    b = new_task(owner, "b", blocked_by=[a["id"]])
    error = update_rejected("validation_error", owner, a, blocked_by=[a["id"]])
    assert error.details["fields"] == {"blocked_by": "a task cannot be blocked by itself"}
    error = update_rejected("validation_error", owner, a, blocked_by=[b["id"]])
    assert list(error.details["fields"]) == ["blocked_by"]
    assert _edges() == {(b["id"], a["id"])}


def test_a_diamond_is_not_a_cycle(world: World) -> None:
    owner = world.caller("owner")
    base = new_task(owner, "base")
    left = new_task(owner, "left", blocked_by=[base["id"]])
    right = new_task(owner, "right", blocked_by=[base["id"]])
    top = new_task(owner, "top")
    result = update_task(owner, top, blocked_by=[left["id"], right["id"]])["task"]
    assert result["blocked_by"] == sorted([left["id"], right["id"]])


def test_it_refuses_more_than_twenty_dependencies(world: World) -> None:
    owner = world.caller("owner")
    error = rejected(
        "validation_error",
        task_create,
        owner,
        write_context=wc(owner),
        title="t",
        description="d",
        blocked_by=[str(uuid.uuid4()) for _ in range(21)],
    )
    assert list(error.details["fields"]) == ["blocked_by"]


def test_a_viewer_cannot_change_dependencies(world: World) -> None:
    owner = world.caller("owner")
    a, task = new_task(owner, "a"), new_task(owner, "t")
    update_rejected("forbidden", world.caller("viewer"), task, blocked_by=[a["id"]])
    assert _edges() == set()
