"""The tenancy rule (docs/architecture.md) for continuity: role x operation, allowed and denied, and
the credential's scopes on top (effective capability = role capability AND credential scope)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db.models import Sum

from audit.models import AuditEvent
from continuity.models import Memory, StateVersion, Task, WorkReceipt
from continuity.selectors import (
    continuity_context,
    memory_get,
    memory_search,
    server_identity,
    state_get,
    task_get,
    task_list,
)
from continuity.services import memory_add, state_put, task_claim_next, task_create, task_update
from core.access import CredentialKind
from tests.continuity.helpers import add_note, last_audit, new_task, outcome, rejected
from tests.factories import World, wc

ROLES = ("owner", "admin", "contributor", "viewer")
WRITERS = ("owner", "admin", "contributor")
READ = "continuity:read"
WRITE = "continuity:write"
AUDIT = "audit:read"

Arguments = Callable[[Any, dict[str, Any]], dict[str, Any]]


def _seed(world: World) -> dict[str, Any]:
    """One memory, one task and one running summary in alpha, made by its owner."""
    owner = world.caller("owner")
    task = new_task(owner)
    state_put(
        owner, write_context=wc(owner), agent="codex", body="# Running summary\n- goal: tests"
    )
    return {"memory": add_note(owner, "release checklist"), "task": task}


# Each operation with arguments that succeed for anyone allowed to call it.
READS: dict[str, tuple[Callable[..., Any], Arguments]] = {
    "server_identity": (server_identity, lambda c, seed: {}),
    "continuity_context": (continuity_context, lambda c, seed: {}),
    "memory_get": (memory_get, lambda c, seed: {"memory_id": seed["memory"]["id"]}),
    "memory_search": (memory_search, lambda c, seed: {"query": "release"}),
    "task_get": (task_get, lambda c, seed: {"task_id": seed["task"]["id"]}),
    "task_list": (task_list, lambda c, seed: {}),
    "state_get": (state_get, lambda c, seed: {"agent": "codex"}),
}


def _task_update_args(caller: Any, seed: dict[str, Any]) -> dict[str, Any]:
    current = Task.objects.get(pk=seed["task"]["id"]).version
    return {
        "write_context": wc(caller),
        "task_id": seed["task"]["id"],
        "expected_version": current,
        "next_step": "review",
        "work_receipt": {"session_ref": uuid.uuid4().hex, "summary": "did it"},
    }


WRITES: dict[str, tuple[Callable[..., Any], Arguments]] = {
    "memory_add": (
        memory_add,
        lambda c, seed: {"write_context": wc(c), "kind": "note", "content": "a note"},
    ),
    "task_create": (
        task_create,
        lambda c, seed: {"write_context": wc(c), "title": "t", "description": "d"},
    ),
    "task_update": (task_update, _task_update_args),
    # The seed's task is ready: a claim moves it (its version grows).
    "task_claim_next": (task_claim_next, lambda c, seed: {"write_context": wc(c)}),
    "state_put": (
        state_put,
        lambda c, seed: {
            "write_context": wc(c),
            "agent": "codex",
            "body": "# Running summary\n- goal: more tests",
        },
    ),
}

TABLE = [(op, role, True) for op in READS for role in ROLES] + [
    (op, role, role in WRITERS) for op in WRITES for role in ROLES
]


def _rows() -> tuple[int, ...]:
    """Rows of every kind, and the sum of task versions (an update grows it by one)."""
    return (
        Memory.objects.count(),
        Task.objects.count(),
        Task.objects.aggregate(total=Sum("version"))["total"] or 0,
        WorkReceipt.objects.count(),
        StateVersion.objects.count(),
    )


@pytest.mark.parametrize(("operation", "role", "allowed"), TABLE)
def test_the_role_table_decides_each_continuity_operation(
    world: World, operation: str, role: str, allowed: bool
) -> None:
    seed = _seed(world)
    service, arguments = {**READS, **WRITES}[operation]
    caller = world.caller(role)
    before = _rows()
    result = outcome(service, caller, **arguments(caller, seed))
    event = last_audit(world.alpha)
    assert event.operation == operation
    assert event.user_id == getattr(world, role).pk
    if allowed:
        assert isinstance(result, dict)
        assert (event.outcome, event.error_code) == ("success", "")
        assert (_rows() != before) == (operation in WRITES)
    else:
        assert result == "forbidden"
        assert (event.outcome, event.error_code) == ("rejected", "forbidden")
        assert _rows() == before


@pytest.mark.parametrize("operation", WRITES)
def test_it_tells_a_viewer_its_role_does_not_allow_writing(world: World, operation: str) -> None:
    seed = _seed(world)
    service, arguments = WRITES[operation]
    viewer = world.caller("viewer")
    error = rejected("forbidden", service, viewer, **arguments(viewer, seed))
    assert error.message == "A viewer can read this project but not change it."
    assert "required_scopes" not in error.details


@pytest.mark.parametrize("role", WRITERS)
@pytest.mark.parametrize("operation", WRITES)
def test_a_credential_without_continuity_write_cannot_write_whatever_the_role(
    world: World, operation: str, role: str
) -> None:
    seed = _seed(world)
    service, arguments = WRITES[operation]
    caller = world.caller(role, scopes={READ, AUDIT})
    before = _rows()
    error = rejected("forbidden", service, caller, **arguments(caller, seed))
    assert error.message == "This credential lacks the continuity:write scope."
    assert error.details == {"required_scopes": [WRITE]}
    assert _rows() == before
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        operation,
        "rejected",
        "forbidden",
    )


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("operation", READS)
def test_a_credential_without_continuity_read_cannot_read_whatever_the_role(
    world: World, operation: str, role: str
) -> None:
    seed = _seed(world)
    service, arguments = READS[operation]
    caller = world.caller(role, scopes={WRITE, AUDIT})
    error = rejected("forbidden", service, caller, **arguments(caller, seed))
    assert error.details == {"required_scopes": [READ]}


@pytest.mark.parametrize("operation", WRITES)
def test_a_write_only_credential_can_write(world: World, operation: str) -> None:
    seed = _seed(world)
    service, arguments = WRITES[operation]
    caller = world.caller("contributor", scopes={WRITE})
    assert isinstance(service(caller, **arguments(caller, seed)), dict)


@pytest.mark.parametrize("operation", [*READS, *WRITES])
def test_a_credential_without_scopes_can_do_nothing(world: World, operation: str) -> None:
    seed = _seed(world)
    service, arguments = {**READS, **WRITES}[operation]
    caller = world.caller("owner", scopes=set())
    rejected("forbidden", service, caller, **arguments(caller, seed))


@pytest.mark.parametrize("operation", WRITES)
def test_an_api_key_is_held_to_its_scopes_like_a_token(world: World, operation: str) -> None:
    seed = _seed(world)
    service, arguments = WRITES[operation]
    caller = world.caller("owner", scopes={READ}, kind=CredentialKind.API_KEY)
    rejected("forbidden", service, caller, **arguments(caller, seed))


@pytest.mark.parametrize("operation", WRITES)
def test_a_signed_in_person_acts_by_role_alone(world: World, operation: str) -> None:
    """Scopes limit delegated credentials; a first-party session is bounded by its role."""
    seed = _seed(world)
    service, arguments = WRITES[operation]
    contributor = world.caller("contributor", scopes=set(), kind=CredentialKind.SESSION)
    assert isinstance(service(contributor, **arguments(contributor, seed)), dict)
    viewer = world.caller("viewer", kind=CredentialKind.SESSION)
    rejected("forbidden", service, viewer, **arguments(viewer, seed))


def test_the_capability_is_checked_before_the_input(world: World) -> None:
    """A caller who may not write learns nothing about its input, not even that it is bad."""
    viewer = world.caller("viewer")
    rejected("forbidden", memory_add, viewer, write_context={"resource": 1}, kind="poem")
    rejected("forbidden", task_update, viewer, task_id="nope", expected_version=-1)
    assert (
        AuditEvent.objects.filter(
            project_id=world.alpha.pk, error_code="forbidden", user_id=world.viewer.pk
        ).count()
        == 2
    )
