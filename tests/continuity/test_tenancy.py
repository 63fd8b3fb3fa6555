"""An id from another project behaves exactly like an id that does not exist: same code, same
message, same audit row. Existence never leaks (docs/architecture.md, "The tenancy rule")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from continuity.models import Task
from continuity.selectors import (
    continuity_context,
    memory_get,
    memory_search,
    state_get,
    task_get,
    task_list,
)
from continuity.services import memory_add, state_put, task_create, task_update
from tests.continuity.helpers import (
    add_decision,
    add_note,
    as_json,
    audit_shape,
    last_audit,
    new_task,
    receipt,
    rejected,
)
from tests.factories import World, wc

MISSING = "5f2b8f0e-0000-4000-8000-000000000000"


def _beta_ids(world: World) -> dict[str, str]:
    outsider = world.caller("outsider")
    return {
        "memory": add_decision(outsider, "beta's secret decision")["id"],
        "task": new_task(outsider, "beta's secret task")["id"],
    }


CASES: dict[str, tuple[Callable[..., Any], str, Callable[[Any, str], dict[str, Any]]]] = {
    "memory_get": (memory_get, "memory", lambda c, i: {"memory_id": i}),
    "task_get": (task_get, "task", lambda c, i: {"task_id": i}),
    "task_update": (
        task_update,
        "task",
        lambda c, i: {
            "write_context": wc(c),
            "task_id": i,
            "expected_version": 1,
            "status": "in_progress",
            "work_receipt": receipt(),
        },
    ),
    "memory_add supersedes": (
        memory_add,
        "memory",
        lambda c, i: {
            "write_context": wc(c),
            "kind": "decision",
            "content": "c",
            "rationale": "r",
            "source": "s",
            "supersedes": i,
        },
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_another_projects_id_answers_like_a_missing_one(world: World, case: str) -> None:
    service, kind, arguments = CASES[case]
    foreign = _beta_ids(world)[kind]
    owner = world.caller("owner")

    missing_error = rejected("not_found", service, owner, **arguments(owner, MISSING))
    missing_event = audit_shape(last_audit(world.alpha))
    foreign_error = rejected("not_found", service, owner, **arguments(owner, foreign))
    foreign_event = audit_shape(last_audit(world.alpha))

    assert foreign_error.as_dict() == missing_error.as_dict()
    # The audit rows differ only in the id that was asked for.
    assert foreign_event["target_id"] in ("", foreign)
    assert missing_event["target_id"] in ("", MISSING)
    assert {**foreign_event, "target_id": "?"} == {**missing_event, "target_id": "?"}
    assert foreign_event["outcome"] == "rejected"


def test_a_failed_update_from_another_project_leaves_the_task_untouched(world: World) -> None:
    foreign = _beta_ids(world)["task"]
    before = Task.objects.values().get(pk=foreign)
    owner = world.caller("owner")
    rejected(
        "not_found",
        task_update,
        owner,
        write_context=wc(owner),
        task_id=foreign,
        expected_version=1,
        status="cancelled",
        work_receipt=receipt(),
    )
    assert Task.objects.values().get(pk=foreign) == before
    assert not Task.objects.get(pk=foreign).receipts.exists()


@pytest.mark.parametrize("repository", ["beta-co/service", "nobody/nothing"])
def test_a_repository_bound_only_to_another_project_is_like_an_unknown_one(
    world: World, repository: str
) -> None:
    owner = world.caller("owner")
    error = rejected(
        "validation_error",
        task_create,
        owner,
        write_context=wc(owner),
        title="t",
        description="d",
        repository_ref={"repository": repository},
    )
    assert error.as_dict()["fields"] == {
        "repository_ref.repository": "is not a repository bound to this project"
    }


def test_another_projects_running_summary_is_not_found(world: World) -> None:
    outsider = world.caller("outsider")
    state_put(outsider, write_context=wc(outsider), agent="codex", body="# Running summary\n- b")
    theirs = rejected("not_found", state_get, world.caller("owner"), agent="codex")
    none = rejected("not_found", state_get, world.caller("owner"), agent="claude")
    assert theirs.message.replace("codex", "?") == none.message.replace("claude", "?")


def test_reads_and_searches_never_show_another_projects_rows(world: World) -> None:
    outsider = world.caller("outsider")
    add_note(outsider, "zebra migration plan")
    new_task(outsider, "zebra task")
    state_put(outsider, write_context=wc(outsider), agent="codex", body="# Running summary\n- z")
    owner = world.caller("owner")
    assert as_json(memory_search(owner, query="zebra"))["results"] == []
    assert as_json(task_list(owner))["tasks"] == []
    context = as_json(continuity_context(owner))
    assert (context["memories"], context["tasks"], context["receipts"], context["state"]) == (
        [],
        [],
        [],
        None,
    )
    assert context["counts"]["memories"] == 0
