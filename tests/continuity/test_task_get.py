"""task_get: the whole task with its most recent work receipts."""

from __future__ import annotations

import pytest

from continuity.selectors import task_get
from continuity.services import task_update
from tests.continuity.helpers import as_json, last_audit, new_task, receipt, rejected
from tests.factories import World, wc


def test_it_returns_the_task_and_its_newest_ten_receipts(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner, "Ship", description="The goal.", next_step="Begin.")
    for n in range(12):
        task_update(
            owner,
            write_context=wc(owner),
            task_id=task["id"],
            expected_version=n + 1,
            work_receipt=receipt(f"s-{n}"),
        )
    result = as_json(task_get(world.caller("viewer"), task_id=task["id"]))
    assert result["task"]["id"] == task["id"]
    assert (result["task"]["description"], result["task"]["version"]) == ("The goal.", 13)
    assert [r["session_ref"] for r in result["receipts"]] == [f"s-{n}" for n in range(11, 1, -1)]
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "task_get",
        "success",
        "task",
        task["id"],
    )


def test_it_answers_not_found_for_an_unknown_task(world: World) -> None:
    error = rejected(
        "not_found",
        task_get,
        world.caller("viewer"),
        task_id="5f2b8f0e-0000-4000-8000-000000000000",
    )
    assert error.message == "No such task in this project."


@pytest.mark.parametrize("task_id", ["", "zzz", 7, ["a"], {"id": "x"}])
def test_it_rejects_a_task_id_that_is_not_a_uuid(world: World, task_id: object) -> None:
    error = rejected("validation_error", task_get, world.caller("viewer"), task_id=task_id)
    assert list(error.details["fields"]) == ["task_id"]
