"""task_claim_next: the oldest ready task moves todo -> in_progress with the caller as its last
mover and its version grown by one; nothing ready is an empty answer, not an error; a key makes
a lost answer safe to ask again; every attempt is audited."""

from __future__ import annotations

from typing import Any

from continuity.models import IdempotencyRecord, Task
from continuity.outputs import TaskClaimOut
from continuity.selectors import continuity_context
from continuity.services import task_claim_next
from core.access import Caller
from tests.continuity.helpers import as_json, audit_rows, new_task, rejected, update_task
from tests.factories import World, wc


def _claim(caller: Caller, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = as_json(task_claim_next(caller, write_context=wc(caller), **extra))
    TaskClaimOut.model_validate(result)
    return result


def test_it_claims_the_oldest_ready_task_for_the_caller(world: World) -> None:
    owner = world.caller("owner")
    oldest, newer = new_task(owner, "oldest"), new_task(owner, "newer")
    contributor = world.caller("contributor")

    claimed = _claim(contributor)["task"]

    assert (claimed["id"], claimed["status"], claimed["version"]) == (
        oldest["id"],
        "in_progress",
        2,
    )
    assert (claimed["updated_by"], claimed["created_by"], claimed["ready"]) == (
        "carla",
        "olivia",
        False,
    )
    stored = Task.objects.get(pk=oldest["id"])
    assert (stored.status, stored.version, stored.updated_by) == ("in_progress", 2, "carla")
    assert Task.objects.get(pk=newer["id"]).status == "todo"
    assert _claim(contributor)["task"]["id"] == newer["id"]
    event = audit_rows(world.alpha, "task_claim_next")[0]
    assert (event.outcome, event.target_type, event.target_id, event.user_id) == (
        "success",
        "task",
        oldest["id"],
        world.contributor.pk,
    )


def test_it_answers_an_empty_result_when_nothing_is_ready(world: World) -> None:
    owner = world.caller("owner")
    assert _claim(owner) == {"task": None}
    blocker = new_task(owner, "blocker")
    update_task(owner, blocker, status="in_progress")
    new_task(owner, "waits", blocked_by=[blocker["id"]])
    assert _claim(owner) == {"task": None}
    assert [
        (e.outcome, e.error_code, e.target_id) for e in audit_rows(world.alpha, "task_claim_next")
    ] == [
        ("success", "", ""),
        ("success", "", ""),
    ]


def test_it_passes_over_a_task_whose_dependency_is_open_and_takes_it_once_done(
    world: World,
) -> None:
    owner = world.caller("owner")
    dependency = new_task(owner, "dependency")
    waiting = new_task(owner, "waiting", blocked_by=[dependency["id"]])
    assert (
        Task.objects.get(pk=waiting["id"]).created_at
        > Task.objects.get(pk=dependency["id"]).created_at
    )
    first = _claim(owner)["task"]
    assert first["id"] == dependency["id"]
    assert _claim(owner) == {"task": None}
    update_task(owner, first, status="done")
    assert _claim(owner)["task"]["id"] == waiting["id"]


def test_continuity_context_lists_ready_work_first_in_claim_order(world: World) -> None:
    owner = world.caller("owner")
    dependency = new_task(owner, "dependency")
    update_task(owner, dependency, status="in_progress")
    waiting = new_task(owner, "waiting", blocked_by=[dependency["id"]])
    ready_old, ready_new = new_task(owner, "ready old"), new_task(owner, "ready new")
    # Moved last: without the ready-first order it would lead the list.
    update_task(owner, waiting, next_step="wait for the dependency")

    tasks = as_json(continuity_context(owner))["tasks"]

    assert [t["title"] for t in tasks] == ["ready old", "ready new", "waiting", "dependency"]
    assert [t["ready"] for t in tasks] == [True, True, False, False]
    assert tasks[2]["waiting_on"] == [dependency["id"]]
    assert _claim(owner)["task"]["id"] == ready_old["id"]
    assert ready_new["id"] == as_json(continuity_context(owner))["tasks"][0]["id"]


def test_it_never_claims_another_projects_task(world: World) -> None:
    new_task(world.caller("outsider"), "beta's ready task")
    assert _claim(world.caller("owner")) == {"task": None}
    assert Task.objects.get().status == "todo"


def test_a_viewer_is_forbidden_and_nothing_moves(world: World) -> None:
    task = new_task(world.caller("owner"))
    viewer = world.caller("viewer")
    rejected("forbidden", task_claim_next, viewer, write_context=wc(viewer))
    assert Task.objects.get(pk=task["id"]).status == "todo"
    event = audit_rows(world.alpha, "task_claim_next")[-1]
    assert (event.outcome, event.error_code, event.user_id) == (
        "rejected",
        "forbidden",
        world.viewer.pk,
    )


def test_a_retry_with_the_same_key_returns_the_first_claim(world: World) -> None:
    owner = world.caller("owner")
    first_task, second_task = new_task(owner, "first"), new_task(owner, "second")

    first = _claim(owner, idempotency_key="claim-1")
    again = _claim(owner, idempotency_key="claim-1")

    assert again == first
    assert first["task"]["id"] == first_task["id"]
    assert Task.objects.get(pk=second_task["id"]).status == "todo"
    assert IdempotencyRecord.objects.filter(operation="task_claim_next").count() == 1
    assert [(e.outcome, e.target_id) for e in audit_rows(world.alpha, "task_claim_next")] == [
        ("success", first_task["id"]),
        ("replayed", first_task["id"]),
    ]
    # A new key is a new claim.
    assert _claim(owner, idempotency_key="claim-2")["task"]["id"] == second_task["id"]


def test_it_rejects_a_mismatched_write_context_before_claiming(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    rejected(
        "write_context_mismatch",
        task_claim_next,
        owner,
        write_context={**wc(owner), "project": "another"},
    )
    assert Task.objects.get(pk=task["id"]).status == "todo"
