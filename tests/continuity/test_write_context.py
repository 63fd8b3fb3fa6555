"""Every mutation names the write_context it means; a mismatch is refused before anything else
happens (docs/architecture.md, "The operation table")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from continuity.models import IdempotencyRecord, Memory, StateVersion, Task, WorkReceipt
from continuity.services import memory_add, state_put, task_claim_next, task_create, task_update
from core.access import Caller
from tests.continuity.helpers import add_note, last_audit, new_task, receipt, rejected
from tests.factories import World, wc


def _writes(task: dict[str, Any]) -> dict[str, tuple[Callable[..., Any], dict[str, Any]]]:
    return {
        "memory_add": (memory_add, {"kind": "note", "content": "a note"}),
        "task_create": (task_create, {"title": "t", "description": "d"}),
        "task_update": (
            task_update,
            {"task_id": task["id"], "expected_version": 1, "work_receipt": receipt("s-9")},
        ),
        "state_put": (state_put, {"agent": "codex", "body": "# Running summary\n- a"}),
        "task_claim_next": (task_claim_next, {}),
    }


def _counts() -> list[int]:
    return [
        model.objects.count()
        for model in (Memory, Task, WorkReceipt, StateVersion, IdempotencyRecord)
    ] + [Task.objects.filter(status="in_progress").count()]  # a claim moves a task


@pytest.mark.parametrize("field", ["resource", "instance", "project"])
@pytest.mark.parametrize(
    "operation", ["memory_add", "task_create", "task_update", "task_claim_next", "state_put"]
)
def test_it_rejects_a_write_context_that_differs_in_any_field(
    world: World, operation: str, field: str
) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    service, arguments = _writes(task)[operation]
    context = {**wc(owner), field: "something-else"}
    before = _counts()
    error = rejected("write_context_mismatch", service, owner, write_context=context, **arguments)
    assert error.details == {"mismatched": [field], "expected": wc(owner)}
    assert _counts() == before
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        operation,
        "rejected",
        "write_context_mismatch",
    )


def test_it_rejects_the_write_context_of_another_project(world: World) -> None:
    """A session that pinned beta's profile cannot write into alpha by accident."""
    owner = world.caller("owner")
    beta_context = wc(world.caller("outsider"))
    error = rejected(
        "write_context_mismatch",
        memory_add,
        owner,
        write_context=beta_context,
        kind="note",
        content="meant for beta",
    )
    assert error.details["mismatched"] == ["project"]
    assert not Memory.objects.exists()


def test_it_rejects_the_write_context_of_another_resource(world: World) -> None:
    caller = world.caller("owner", resource="https://other.example/mcp")
    rejected(
        "write_context_mismatch",
        memory_add,
        caller,
        write_context={**wc(caller), "resource": "http://testserver/mcp"},
        kind="note",
        content="x",
    )


def _with_mismatch(caller: Caller) -> dict[str, str]:
    return {**wc(caller), "instance": "staging"}


def test_a_mismatch_wins_over_a_stale_version_and_a_duplicate_receipt(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    task_update(
        owner,
        write_context=wc(owner),
        task_id=task["id"],
        expected_version=1,
        work_receipt=receipt("s-1"),
    )
    rejected(
        "write_context_mismatch",
        task_update,
        owner,
        write_context=_with_mismatch(owner),
        task_id=task["id"],
        expected_version=1,
        work_receipt=receipt("s-1"),
    )


def test_a_mismatch_wins_over_a_missing_task(world: World) -> None:
    owner = world.caller("owner")
    rejected(
        "write_context_mismatch",
        task_update,
        owner,
        write_context=_with_mismatch(owner),
        task_id="5f2b8f0e-0000-4000-8000-000000000000",
        expected_version=1,
        status="done",
    )


def test_a_mismatch_wins_over_an_idempotency_conflict_and_keeps_the_key(world: World) -> None:
    owner = world.caller("owner")
    first = add_note(owner, "first", idempotency_key="k-1")
    rejected(
        "write_context_mismatch",
        memory_add,
        owner,
        write_context=_with_mismatch(owner),
        kind="note",
        content="second",
        idempotency_key="k-1",
    )
    assert add_note(owner, "first", idempotency_key="k-1") == first
    assert IdempotencyRecord.objects.count() == 1


def test_a_mismatch_wins_over_a_refused_running_summary(world: World) -> None:
    owner = world.caller("owner")
    rejected(
        "write_context_mismatch",
        state_put,
        owner,
        write_context=_with_mismatch(owner),
        agent="codex",
        body="I'm sorry, I cannot summarize this.",
    )


@pytest.mark.parametrize(
    "context",
    [
        None,
        "http://testserver/mcp",
        {"resource": "http://testserver/mcp", "instance": "test"},
        {"resource": 1, "instance": "test", "project": "p"},
    ],
)
def test_a_missing_or_malformed_write_context_is_a_validation_error(
    world: World, context: Any
) -> None:
    owner = world.caller("owner")
    arguments: dict[str, Any] = {"kind": "note", "content": "x"}
    if context is not None:
        arguments["write_context"] = context
    error = rejected("validation_error", memory_add, owner, **arguments)
    assert any(name.startswith("write_context") for name in error.details["fields"])


def test_extra_fields_in_the_write_context_are_refused(world: World) -> None:
    owner = world.caller("owner")
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context={**wc(owner), "role": "owner"},
        kind="note",
        content="x",
    )
    assert error.details["fields"] == {"write_context.role": "Extra inputs are not permitted"}
