"""task_create: a stable goal and its first handoff state."""

from __future__ import annotations

from typing import Any

import pytest

from continuity.models import Task
from continuity.selectors import task_get
from continuity.services import task_create
from tests.continuity.helpers import as_json, audit_rows, last_audit, new_task, rejected
from tests.factories import World, bind_repository, wc


def test_it_creates_a_todo_task_at_version_one(world: World) -> None:
    contributor = world.caller("contributor")
    result = new_task(contributor, "Ship the core", description="Goal and boundary.")
    task = Task.objects.get()
    assert result == {
        "id": str(task.pk),
        "title": "Ship the core",
        "status": "todo",
        "version": 1,
        "created_at": result["created_at"],
    }
    assert (task.project, task.description, task.created_by, task.updated_by) == (
        world.alpha,
        "Goal and boundary.",
        "carla",
        "carla",
    )
    assert (task.blockers, task.handoff_note, task.repository_ref) == ([], "", None)
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "task_create",
        "success",
        "task",
        str(task.pk),
    )


@pytest.mark.parametrize("status", ["todo", "in_progress", "blocked"])
def test_it_creates_a_task_in_any_open_status(world: World, status: str) -> None:
    result = new_task(world.caller("owner"), status=status, next_step="Start here.")
    assert result["status"] == status
    assert Task.objects.get().next_step == "Start here."


@pytest.mark.parametrize("status", ["done", "cancelled", "open", "TODO"])
def test_it_refuses_to_create_a_task_in_a_closed_or_unknown_status(
    world: World, status: str
) -> None:
    owner = world.caller("owner")
    error = rejected(
        "validation_error",
        task_create,
        owner,
        write_context=wc(owner),
        title="t",
        description="d",
        status=status,
    )
    assert list(error.details["fields"]) == ["status"]
    assert not Task.objects.exists()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "t" * 201}, "title"),
        ({"description": ""}, "description"),
        ({"description": "d" * 8001}, "description"),
        ({"next_step": "n" * 2001}, "next_step"),
        ({"repository_ref": {"repository": "no-slash"}}, "repository_ref.repository"),
        ({"repository_ref": {"repository": "acme/app", "branch": "a..b"}}, "repository_ref.branch"),
        ({"repository_ref": {"repository": "acme/app", "branch": "-x"}}, "repository_ref.branch"),
        (
            {"repository_ref": {"repository": "acme/app", "commit": "ABC1234"}},
            "repository_ref.commit",
        ),
        ({"repository_ref": {"repository": "acme/app", "token": "x"}}, "repository_ref.token"),
    ],
)
def test_it_rejects_bad_input_naming_the_field(
    world: World, changes: dict[str, Any], field: str
) -> None:
    owner = world.caller("owner")
    arguments = {"write_context": wc(owner), "title": "t", "description": "d", **changes}
    error = rejected("validation_error", task_create, owner, **arguments)
    assert list(error.details["fields"]) == [field]
    assert not Task.objects.exists()


def test_it_keeps_a_bound_repositorys_canonical_name_and_the_ref(world: World) -> None:
    owner = world.caller("owner")
    result = new_task(
        owner,
        repository_ref={"repository": "ACME/App", "branch": "feature/x", "commit": "abc1234"},
    )
    assert Task.objects.get(pk=result["id"]).repository_ref == {
        "repository": "acme/app",
        "branch": "feature/x",
        "commit": "abc1234",
    }


def test_it_refuses_a_repository_that_is_not_bound_to_the_project(world: World) -> None:
    bind_repository(world.beta, "acme", "other")
    owner = world.caller("owner")
    error = rejected(
        "validation_error",
        task_create,
        owner,
        write_context=wc(owner),
        title="t",
        description="d",
        repository_ref={"repository": "acme/other"},
    )
    assert error.details["fields"] == {
        "repository_ref.repository": "is not a repository bound to this project"
    }
    assert not Task.objects.exists()


def test_a_retry_with_the_same_key_returns_the_original_task(world: World) -> None:
    owner = world.caller("owner")
    first = new_task(owner, "t", idempotency_key="create-1")
    owner_again = world.caller("owner")
    assert new_task(owner_again, "t", idempotency_key="create-1") == first
    assert Task.objects.count() == 1
    assert [e.outcome for e in audit_rows(world.alpha, "task_create")] == ["success", "replayed"]


def test_a_replay_returns_the_original_result_even_after_the_task_moved_on(world: World) -> None:
    owner = world.caller("owner")
    first = new_task(owner, "t", idempotency_key="create-1")
    Task.objects.filter(pk=first["id"]).update(version=5)
    assert new_task(owner, "t", idempotency_key="create-1") == first
    assert as_json(task_get(owner, task_id=first["id"]))["task"]["version"] == 5


def test_it_rejects_the_same_key_with_another_task(world: World) -> None:
    owner = world.caller("owner")
    new_task(owner, "t", idempotency_key="create-1")
    rejected(
        "idempotency_conflict",
        task_create,
        owner,
        write_context=wc(owner),
        title="another",
        description="Services, selectors and their tests.",
        idempotency_key="create-1",
    )
    assert Task.objects.count() == 1
