"""Inputs that could crash the database or the server (NUL characters, unpaired surrogates,
huge integers, wrong types, wrong shapes) answer validation_error naming the field, never an
exception, never a partial write; the error itself is always valid UTF-8 JSON."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from continuity.models import (
    IdempotencyRecord,
    Memory,
    StateVersion,
    Task,
    TaskDependency,
    WorkReceipt,
)
from continuity.selectors import (
    continuity_context,
    memory_get,
    memory_search,
    state_get,
    task_get,
    task_list,
)
from continuity.services import memory_add, state_put, task_claim_next, task_create, task_update
from core.errors import HeyAiraError
from core.operations import Operation
from tests.continuity.helpers import last_audit, new_task, outcome, rejected
from tests.factories import World, wc

UUID = "5f2b8f0e-0000-4000-8000-000000000000"
TASK = "task"  # replaced by a real task id at run time

# Each operation with arguments that succeed, and the paths of its text and number fields.
VALID: dict[str, tuple[Operation[..., Any, Any], dict[str, Any]]] = {
    "memory_add": (
        memory_add,
        {
            "kind": "decision",
            "content": "c",
            "title": "t",
            "rationale": "r",
            "source": "s",
            "idempotency_key": "k-1",
        },
    ),
    "task_create": (
        task_create,
        {
            "title": "t",
            "description": "d",
            "next_step": "n",
            "repository_ref": {"repository": "acme/app", "branch": "main", "commit": "abc1234"},
            "blocked_by": [TASK],
        },
    ),
    "task_update": (
        task_update,
        {
            "task_id": TASK,
            "expected_version": 1,
            "next_step": "n",
            "handoff_note": "h",
            "blockers": ["b"],
            "blocked_by": [TASK],
            "work_receipt": {
                "session_ref": "s-1",
                "summary": "s",
                "tests": [{"name": "t", "result": "passed"}],
                "commits": ["abc1234"],
                "next_step": "n",
                "blockers": ["b"],
            },
        },
    ),
    "state_put": (state_put, {"agent": "codex", "body": "# Running summary\n- a"}),
    "task_claim_next": (task_claim_next, {"idempotency_key": "claim-1"}),
    "memory_get": (memory_get, {"memory_id": UUID}),
    "memory_search": (memory_search, {"query": "q", "limit": 5}),
    "task_get": (task_get, {"task_id": UUID}),
    "task_list": (task_list, {"status": "open", "limit": 5}),
    "state_get": (state_get, {"agent": "codex"}),
    "continuity_context": (continuity_context, {"memory_limit": 1, "task_limit": 1}),
}
WRITES = ("memory_add", "task_create", "task_update", "task_claim_next", "state_put")

TEXT_PATHS: dict[str, list[str]] = {
    "memory_add": ["content", "title", "rationale", "source", "idempotency_key"],
    "task_create": [
        "title",
        "description",
        "next_step",
        "repository_ref.repository",
        "repository_ref.branch",
        "repository_ref.commit",
        "blocked_by.0",
    ],
    "task_update": [
        "task_id",
        "next_step",
        "handoff_note",
        "blockers.0",
        "blocked_by.0",
        "work_receipt.session_ref",
        "work_receipt.summary",
        "work_receipt.tests.0.name",
        "work_receipt.commits.0",
        "work_receipt.next_step",
        "work_receipt.blockers.0",
    ],
    "state_put": ["agent", "body"],
    "task_claim_next": ["idempotency_key"],
    "memory_get": ["memory_id"],
    "memory_search": ["query"],
    "task_get": ["task_id"],
    "task_list": ["cursor"],
    "state_get": ["agent"],
}
WRITE_CONTEXT_PATHS = ["write_context.resource", "write_context.instance", "write_context.project"]
NUMBER_PATHS: dict[str, list[str]] = {
    "task_update": ["expected_version"],
    "state_put": ["expected_version"],
    "memory_search": ["limit"],
    "task_list": ["limit"],
    "continuity_context": ["memory_limit", "task_limit", "receipt_limit"],
}

NUMBER_FIELDS = {"expected_version", "limit", "memory_limit", "task_limit", "receipt_limit"}

BAD_TEXT = {
    "nul": "before\x00after",
    "lone high surrogate": "before\ud800after",
    "lone low surrogate": "\udfff",
    "number": 12345,
    "huge number": 2**70,
    "list": ["a"],
    "object": {"a": "b"},
    "bytes": b"\xff\xfe",
    "a megabyte": "x" * 1_000_000,
}
BAD_NUMBERS = {
    "huge": 2**64,
    "enormous": 10**400,
    "negative huge": -(2**64),
    "nan": math.nan,
    "infinity": math.inf,
    "float": 1.5,
    "string": "1",
    "bool": True,
    "list": [1],
}


def _cases() -> list[tuple[str, str, Any]]:
    cases = []
    for operation, paths in TEXT_PATHS.items():
        extra = WRITE_CONTEXT_PATHS if operation in WRITES else []
        for path in paths + extra:
            cases += [(operation, path, name) for name in BAD_TEXT]
    for operation, paths in NUMBER_PATHS.items():
        for path in paths:
            cases += [(operation, path, name) for name in BAD_NUMBERS]
    return cases


def _arguments(world: World, operation: str) -> dict[str, Any]:
    owner = world.caller("owner")
    arguments = copy.deepcopy(VALID[operation][1])
    if arguments.get("task_id") == TASK:
        arguments["task_id"] = new_task(owner)["id"]
    if arguments.get("blocked_by") == [TASK]:
        arguments["blocked_by"] = [new_task(owner)["id"]]
    if operation in WRITES:
        arguments["write_context"] = wc(owner)
    return arguments


def _set(arguments: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    target: Any = arguments
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value


def _rows() -> list[int]:
    models = (Memory, Task, WorkReceipt, StateVersion, IdempotencyRecord, TaskDependency)
    return [model.objects.count() for model in models]


@pytest.mark.parametrize("operation", VALID)
def test_the_valid_arguments_of_this_file_are_accepted(world: World, operation: str) -> None:
    """So that every rejection below is caused by the one bad value it puts in."""
    service, _ = VALID[operation]
    result = outcome(service, world.caller("owner"), **_arguments(world, operation))
    # Ids that name nothing answer not_found: the input itself was accepted.
    assert isinstance(result, dict) or result == "not_found", result


@pytest.mark.parametrize(("operation", "path", "bad"), _cases())
def test_a_dangerous_value_is_a_validation_error_naming_its_field(
    world: World, operation: str, path: str, bad: str
) -> None:
    service, _ = VALID[operation]
    arguments = _arguments(world, operation)
    value = BAD_TEXT[bad] if path.split(".")[-1] not in NUMBER_FIELDS else BAD_NUMBERS[bad]
    _set(arguments, path, value)
    before = _rows()

    error = rejected("validation_error", service, world.caller("owner"), **arguments)

    fields = error.details["fields"]
    assert all(name == path or name.startswith(path + ".") for name in fields), fields
    assert _rows() == before
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        operation,
        "rejected",
        "validation_error",
    )


@pytest.mark.parametrize("operation", VALID)
@pytest.mark.parametrize(
    "arguments", [[1, 2], "a string", 42, b"bytes"], ids=["list", "string", "int", "bytes"]
)
def test_arguments_that_are_not_an_object_are_a_validation_error(
    world: World, operation: str, arguments: Any
) -> None:
    service, _ = VALID[operation]
    with pytest.raises(HeyAiraError) as caught:
        service.call(world.caller("owner"), arguments)
    assert caught.value.code == "validation_error"
    assert list(caught.value.details["fields"]) == ["arguments"]


@pytest.mark.parametrize("operation", VALID)
def test_unknown_argument_names_are_refused_even_unprintable_ones(
    world: World, operation: str
) -> None:
    service, _ = VALID[operation]
    arguments = _arguments(world, operation)
    arguments["\x00odd name"] = 1
    error = rejected("validation_error", service, world.caller("owner"), **arguments)
    assert error.details["fields"] == {"\x00odd name": "Extra inputs are not permitted"}


def test_a_key_that_is_not_unicode_text_is_refused(world: World) -> None:
    owner = world.caller("owner")
    rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="note",
        content="c",
        **{"\ud800": 1},
    )
    assert not Memory.objects.exists()


def test_deeply_nested_values_are_a_validation_error(world: World) -> None:
    owner = world.caller("owner")
    nested: Any = "x"
    for _ in range(200):
        nested = [nested]
    error = rejected(
        "validation_error",
        task_update,
        owner,
        write_context=wc(owner),
        task_id=new_task(owner)["id"],
        expected_version=1,
        blockers=nested,
    )
    assert all(name.startswith("blockers") for name in error.details["fields"])


def test_an_error_names_a_long_unknown_argument_briefly(world: World) -> None:
    owner = world.caller("owner")
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="note",
        content="c",
        **{"x" * 1_000_000: 1},
    )
    assert list(error.details["fields"]) == ["x" * 100]
    assert len(error.message) < 300


def test_an_error_lists_at_most_twenty_fields(world: World) -> None:
    owner = world.caller("owner")
    extra = {f"unknown_{n}": n for n in range(500)}
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="note",
        content="c",
        **extra,
    )
    assert len(error.details["fields"]) == 20


def test_a_text_over_its_cap_is_reported_in_characters(world: World) -> None:
    owner = world.caller("owner")
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="note",
        content="c" * 16_001,
    )
    assert error.details["fields"] == {"content": "should have at most 16000 characters"}
