"""Every pinned error code of docs/architecture.md (but `unauthenticated`, which authentication
raises before any service runs, and `unavailable`, which the database layer raises: see
tests/core/test_database_faults.py and test_lock_isolation.py) comes from the service that owns
it, with its stable code, a message a client can show, the fields the table promises, and an
audit row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from continuity.selectors import task_get
from continuity.services import memory_add, state_put, task_create, task_heartbeat, task_update
from core.errors import ERROR_CODES
from tests.continuity.helpers import add_note, last_audit, new_task, receipt, rejected
from tests.factories import World, wc

Scenario = Callable[[World], tuple[Callable[..., Any], Any, dict[str, Any]]]


def forbidden(world: World) -> Any:
    viewer = world.caller("viewer")
    return memory_add, viewer, {"write_context": wc(viewer), "kind": "note", "content": "x"}


def not_found(world: World) -> Any:
    return task_get, world.caller("viewer"), {"task_id": "5f2b8f0e-0000-4000-8000-000000000000"}


def validation_error(world: World) -> Any:
    owner = world.caller("owner")
    return memory_add, owner, {"write_context": wc(owner), "kind": "note", "content": ""}


def write_context_mismatch(world: World) -> Any:
    owner = world.caller("owner")
    context = {**wc(owner), "instance": "prod"}
    return task_create, owner, {"write_context": context, "title": "t", "description": "d"}


def stale_version(world: World) -> Any:
    owner = world.caller("owner")
    task = new_task(owner)
    arguments = {"write_context": wc(owner), "task_id": task["id"], "expected_version": 2}
    return task_update, owner, {**arguments, "next_step": "x"}


def invalid_transition(world: World) -> Any:
    owner = world.caller("owner")
    task = new_task(owner)
    arguments = {"write_context": wc(owner), "task_id": task["id"], "expected_version": 1}
    return task_update, owner, {**arguments, "status": "done"}


def idempotency_conflict(world: World) -> Any:
    owner = world.caller("owner")
    add_note(owner, "first", idempotency_key="k")
    arguments = {"write_context": wc(owner), "kind": "note", "idempotency_key": "k"}
    return memory_add, owner, {**arguments, "content": "second"}


def duplicate_receipt(world: World) -> Any:
    owner = world.caller("owner")
    task = new_task(owner)
    arguments = {"write_context": wc(owner), "task_id": task["id"]}
    task_update(owner, **arguments, expected_version=1, work_receipt=receipt("s"))
    return task_update, owner, {**arguments, "expected_version": 2, "work_receipt": receipt("s")}


def lease_held(world: World) -> Any:
    owner, contributor = world.caller("owner"), world.caller("contributor")
    task = new_task(owner)
    arguments = {"write_context": wc(owner), "task_id": task["id"]}
    task_update(owner, **arguments, expected_version=1, status="in_progress", session_ref="a")
    theirs = {"write_context": wc(contributor), "task_id": task["id"], "expected_version": 2}
    return task_update, contributor, {**theirs, "next_step": "mine now", "session_ref": "b"}


def lease_lost(world: World) -> Any:
    owner = world.caller("owner")
    task = new_task(owner)
    return (
        task_heartbeat,
        owner,
        {"write_context": wc(owner), "task_id": task["id"], "session_ref": "a"},
    )


SCENARIOS: dict[str, Scenario] = {
    "forbidden": forbidden,
    "not_found": not_found,
    "validation_error": validation_error,
    "write_context_mismatch": write_context_mismatch,
    "stale_version": stale_version,
    "invalid_transition": invalid_transition,
    "idempotency_conflict": idempotency_conflict,
    "duplicate_receipt": duplicate_receipt,
    "lease_held": lease_held,
    "lease_lost": lease_lost,
}
# The fields beyond code and message each error carries for the client.
DETAILS = {
    "forbidden": set(),
    "not_found": set(),
    "validation_error": {"fields"},
    "write_context_mismatch": {"mismatched", "expected"},
    "stale_version": {"current_version"},
    "invalid_transition": {"from_status", "to_status", "allowed"},
    "idempotency_conflict": set(),
    "duplicate_receipt": set(),
    "lease_held": {"lease"},
    "lease_lost": {"lease"},
}


def test_every_pinned_code_but_unauthenticated_has_a_scenario() -> None:
    assert set(ERROR_CODES) - {"unauthenticated", "unavailable"} == set(SCENARIOS)
    assert len(ERROR_CODES) == 12


@pytest.mark.parametrize("code", SCENARIOS)
def test_the_owning_service_answers_with_the_pinned_code(world: World, code: str) -> None:
    service, caller, arguments = SCENARIOS[code](world)
    error = rejected(code, service, caller, **arguments)
    body = error.as_dict()
    assert (body["code"], body["message"]) == (code, error.message)
    assert error.message.strip()
    assert set(body) - {"code", "message"} == DETAILS[code]
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        service.__name__,
        "rejected",
        code,
    )


def test_a_stale_version_also_comes_from_state_put(world: World) -> None:
    owner = world.caller("owner")
    error = rejected(
        "stale_version",
        state_put,
        owner,
        write_context=wc(owner),
        agent="codex",
        body="# Running summary\n- a",
        expected_version=3,
    )
    assert error.details == {"current_version": 0}
