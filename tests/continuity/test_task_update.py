"""task_update: an atomic compare-and-set on `version`, with its work receipt in the same
transaction. A rejected update leaves no receipt and no change."""

from __future__ import annotations

from typing import Any

import pytest

from continuity.models import Task, WorkReceipt
from continuity.selectors import task_get
from continuity.services import task_update
from core.access import Caller
from tests.continuity.helpers import (
    as_json,
    audit_rows,
    last_audit,
    new_task,
    receipt,
    rejected,
    update_rejected,
    update_task,
)
from tests.factories import World, wc


def _snapshot(task_id: str) -> dict[str, Any]:
    return dict(Task.objects.values().get(pk=task_id))


def _update(caller: Caller, task_id: str, **changes: Any) -> dict[str, Any]:
    result: dict[str, Any] = as_json(
        task_update(caller, write_context=wc(caller), task_id=task_id, **changes)
    )
    return result


def test_it_updates_the_handoff_and_grows_the_version_by_one(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    contributor = world.caller("contributor")
    result = _update(
        contributor,
        task["id"],
        expected_version=1,
        status="in_progress",
        next_step="Write the concurrency tests.",
        blockers=["Waiting for PostgreSQL access"],
        handoff_note="Half done; see the receipt.",
        repository_ref={"repository": "acme/app", "branch": "tests"},
    )
    assert result["receipt"] is None
    stored = Task.objects.get(pk=task["id"])
    assert (stored.version, stored.status, stored.next_step, stored.blockers) == (
        2,
        "in_progress",
        "Write the concurrency tests.",
        ["Waiting for PostgreSQL access"],
    )
    assert (stored.handoff_note, stored.updated_by, stored.created_by) == (
        "Half done; see the receipt.",
        "carla",
        "olivia",
    )
    assert stored.repository_ref == {"repository": "acme/app", "branch": "tests", "commit": None}
    assert stored.updated_at > stored.created_at
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "task_update",
        "success",
        "task",
        task["id"],
    )
    assert result["task"] == as_json(task_get(owner, task_id=task["id"]))["task"]


def test_it_changes_only_the_fields_given(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner, next_step="first", status="blocked")
    update_task(owner, task, blockers=["a", "b"], handoff_note="note")
    _update(owner, task["id"], expected_version=2, next_step="second")
    stored = Task.objects.get(pk=task["id"])
    assert (stored.status, stored.next_step, stored.blockers, stored.handoff_note) == (
        "blocked",
        "second",
        ["a", "b"],
        "note",
    )


def test_an_empty_blocker_list_clears_the_blockers_and_an_empty_ref_clears_the_ref(
    world: World,
) -> None:
    owner = world.caller("owner")
    task = new_task(owner, repository_ref={"repository": "acme/app"})
    update_task(owner, task, blockers=["x"])
    _update(owner, task["id"], expected_version=2, blockers=[], repository_ref={})
    stored = Task.objects.get(pk=task["id"])
    assert (stored.blockers, stored.repository_ref, stored.version) == ([], None, 3)


def test_it_inserts_the_work_receipt_with_the_new_version(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    work = receipt(
        "codex-2026-11-29",
        summary="Wrote the suite.",
        tests=[{"name": "pytest tests/continuity", "result": "passed"}],
        commits=["abc1234", "0123456789abcdef0123456789abcdef01234567"],
        next_step="Review.",
        blockers=["none really"],
    )
    result = update_task(owner, task, status="in_progress", work_receipt=work)
    stored = WorkReceipt.objects.get()
    assert (stored.project, str(stored.task_id), stored.task_version, stored.author) == (
        world.alpha,
        task["id"],
        2,
        "olivia",
    )
    assert result["receipt"] == {
        "id": str(stored.pk),
        "task_id": task["id"],
        "session_ref": "codex-2026-11-29",
        "summary": "Wrote the suite.",
        "tests": [{"name": "pytest tests/continuity", "result": "passed"}],
        "commits": ["abc1234", "0123456789abcdef0123456789abcdef01234567"],
        "next_step": "Review.",
        "blockers": ["none really"],
        "task_version": 2,
        "author": "olivia",
        "created_at": result["receipt"]["created_at"],
    }
    assert as_json(task_get(owner, task_id=task["id"]))["receipts"] == [result["receipt"]]


def test_a_receipt_alone_is_an_update(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    result = update_task(owner, task, work_receipt=receipt())
    assert result["task"]["version"] == 2
    assert WorkReceipt.objects.count() == 1


def test_it_rejects_a_stale_version_and_keeps_no_receipt(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    update_task(owner, task, next_step="moved on")
    before = _snapshot(task["id"])
    error = update_rejected(
        "stale_version",
        owner,
        task,
        expected_version=1,
        status="in_progress",
        work_receipt=receipt("late-session"),
    )
    assert error.details == {"current_version": 2}
    assert error.message.startswith("expected_version is not current; the current version is 2.")
    assert _snapshot(task["id"]) == before
    assert not WorkReceipt.objects.exists()
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code, event.target_id) == (
        "task_update",
        "rejected",
        "stale_version",
        task["id"],
    )


def test_a_version_from_the_future_is_stale_too(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    error = update_rejected(
        "stale_version",
        owner,
        task,
        expected_version=7,
        next_step="x",
    )
    assert error.details == {"current_version": 1}


def test_it_rejects_a_second_receipt_for_one_session_and_changes_nothing(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    update_task(owner, task, status="in_progress", work_receipt=receipt("s-1"))
    before = _snapshot(task["id"])
    error = update_rejected(
        "duplicate_receipt",
        owner,
        task,
        expected_version=2,
        status="done",
        work_receipt=receipt("s-1", summary="again"),
    )
    assert error.message == "A work receipt for this task and session_ref already exists."
    assert _snapshot(task["id"]) == before
    assert list(WorkReceipt.objects.values_list("summary", flat=True)) == ["Wrote the tests."]
    assert [(e.outcome, e.error_code) for e in audit_rows(world.alpha, "task_update")] == [
        ("success", ""),
        ("rejected", "duplicate_receipt"),
    ]


def test_one_session_may_leave_a_receipt_on_each_task(world: World) -> None:
    owner = world.caller("owner")
    first, second = new_task(owner, "one"), new_task(owner, "two")
    update_task(owner, first, work_receipt=receipt("s-1"))
    update_task(owner, second, work_receipt=receipt("s-1"))
    assert WorkReceipt.objects.filter(session_ref="s-1").count() == 2


def test_a_session_may_leave_another_receipt_under_a_new_session_ref(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    update_task(owner, task, work_receipt=receipt("s-1"))
    _update(owner, task["id"], expected_version=2, work_receipt=receipt("s-2"))
    assert WorkReceipt.objects.count() == 2


REJECTED_UPDATES: dict[str, tuple[str, dict[str, Any]]] = {
    "invalid transition": ("invalid_transition", {"status": "done"}),
    "unbound repository": ("validation_error", {"repository_ref": {"repository": "x/y"}}),
    "blank receipt summary": (
        "validation_error",
        {"work_receipt": {"session_ref": "s-9", "summary": " "}},
    ),
    "receipt test result unknown": (
        "validation_error",
        {"work_receipt": receipt("s-9", tests=[{"name": "t", "result": "flaky"}])},
    ),
    "receipt commit not hex": (
        "validation_error",
        {"work_receipt": receipt("s-9", commits=["not-a-commit"])},
    ),
    "too many blockers": ("validation_error", {"blockers": ["b"] * 21}),
    "stale": ("stale_version", {"expected_version": 9, "status": "in_progress"}),
}


@pytest.mark.parametrize("case", REJECTED_UPDATES)
def test_a_rejected_update_leaves_no_receipt_and_no_change(world: World, case: str) -> None:
    code, changes = REJECTED_UPDATES[case]
    owner = world.caller("owner")
    task = new_task(owner)
    before = _snapshot(task["id"])
    arguments = {"expected_version": 1, "next_step": "changed", "work_receipt": receipt("s-9")}
    rejected(
        code,
        task_update,
        owner,
        write_context=wc(owner),
        task_id=task["id"],
        **{**arguments, **changes},
    )
    assert _snapshot(task["id"]) == before
    assert not WorkReceipt.objects.exists()
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == ("task_update", "rejected", code)


def test_it_rejects_an_update_that_changes_nothing(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    error = update_rejected(
        "validation_error",
        owner,
        task,
        expected_version=1,
    )
    assert error.details["fields"]["arguments"].startswith("nothing to update")
    assert Task.objects.get().version == 1


def test_nulls_are_not_changes(world: World) -> None:
    """Clients often send every optional field, null when unused: that is still no update."""
    owner = world.caller("owner")
    task = new_task(owner)
    error = update_rejected(
        "validation_error",
        owner,
        task,
        expected_version=1,
        status=None,
        next_step=None,
        blockers=None,
        handoff_note=None,
        work_receipt=None,
    )
    assert error.details["fields"]["arguments"].startswith("nothing to update")
    assert Task.objects.get().version == 1


def test_an_empty_repository_ref_alone_is_a_change_it_clears_the_ref(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner, repository_ref={"repository": "acme/app"})
    assert update_task(owner, task, repository_ref={})["task"]["repository_ref"] is None


def test_a_null_repository_ref_is_no_change_like_every_other_null(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner, repository_ref={"repository": "acme/app"})
    error = update_rejected("validation_error", owner, task, repository_ref=None)
    assert error.details["fields"]["arguments"].startswith("nothing to update")
    updated = update_task(owner, task, next_step="n", repository_ref=None)["task"]
    assert updated["repository_ref"] == {"repository": "acme/app", "branch": None, "commit": None}


def test_a_repository_ref_with_a_branch_and_no_repository_is_refused(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner, repository_ref={"repository": "acme/app"})
    error = update_rejected("validation_error", owner, task, repository_ref={"branch": "main"})
    assert error.details["fields"] == {
        "repository_ref.repository": "is required with a branch or a commit"
    }
    assert "send {} to clear it" in error.message


@pytest.mark.parametrize("version", [0, -1, "1", 1.0, True, None, 2**31, 2**64, 10**100])
def test_it_rejects_an_expected_version_that_is_not_a_version(
    world: World, version: object
) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    error = update_rejected(
        "validation_error",
        owner,
        task,
        expected_version=version,
        next_step="x",
    )
    assert list(error.details["fields"]) == ["expected_version"]
    assert Task.objects.get().version == 1


def test_it_answers_not_found_for_an_unknown_task(world: World) -> None:
    owner = world.caller("owner")
    error = rejected(
        "not_found",
        task_update,
        owner,
        write_context=wc(owner),
        task_id="5f2b8f0e-0000-4000-8000-000000000000",
        expected_version=1,
        next_step="x",
    )
    assert error.message == "No such task in this project."
