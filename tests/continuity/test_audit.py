"""The audit rows of the continuity operations (docs/architecture.md): one per attempt, success in
the operation's transaction, rejection after its rollback with its error code, and never any
memory or task text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from audit.models import AuditEvent
from continuity.models import IdempotencyRecord, Memory, Task, WorkReceipt
from continuity.selectors import (
    continuity_context,
    memory_get,
    memory_search,
    server_identity,
    state_get,
    task_get,
    task_list,
)
from continuity.services import memory_add, state_put, task_create, task_update
from tests.continuity.helpers import (
    add_note,
    as_json,
    audit_inserts_seen,
    last_audit,
    new_task,
    outcome,
    receipt,
    rejected,
    update_rejected,
    update_task,
)
from tests.factories import World, wc

MISSING = "5f2b8f0e-0000-4000-8000-000000000000"


def test_it_records_who_did_what_with_which_credential(world: World) -> None:
    contributor = world.caller("contributor")
    added = add_note(contributor, "x")
    event = last_audit(world.alpha)
    assert {
        "request_id": event.request_id,
        "actor_type": event.actor_type,
        "actor_id": event.actor_id,
        "actor_label": event.actor_label,
        "user_id": event.user_id,
        "client_id": event.client_id,
        "credential_kind": event.credential_kind,
        "credential_fingerprint": event.credential_fingerprint,
        "resource": event.resource,
        "instance": event.instance,
        "project_id": event.project_id,
        "operation": event.operation,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "outcome": event.outcome,
        "error_code": event.error_code,
    } == {
        "request_id": contributor.request_id,
        "actor_type": "user",
        "actor_id": str(world.contributor.pk),
        "actor_label": "carla",
        "user_id": world.contributor.pk,
        "client_id": "test-client",
        "credential_kind": "oauth_token",
        "credential_fingerprint": "testfp",
        "resource": "http://testserver/mcp",
        "instance": "test",
        "project_id": world.alpha.pk,
        "operation": "memory_add",
        "target_type": "memory",
        "target_id": added["id"],
        "outcome": "success",
        "error_code": "",
    }
    assert event.occurred_at is not None


def _attempts(world: World) -> list[tuple[Callable[..., Any], dict[str, Any], str, str]]:
    """(service, arguments, outcome, error code): successes, replays and every rejection."""
    owner = world.caller("owner")
    task = new_task(owner)
    note = add_note(owner, "n", idempotency_key="k")
    c = wc(owner)
    return [
        (server_identity, {}, "success", ""),
        (continuity_context, {}, "success", ""),
        (continuity_context, {"memory_limit": -1}, "rejected", "validation_error"),
        (memory_get, {"memory_id": note["id"]}, "success", ""),
        (memory_get, {"memory_id": MISSING}, "rejected", "not_found"),
        (memory_search, {"query": "n"}, "success", ""),
        (task_get, {"task_id": task["id"]}, "success", ""),
        (task_list, {"cursor": "bad"}, "rejected", "validation_error"),
        (state_get, {"agent": "codex"}, "rejected", "not_found"),
        (
            memory_add,
            {"write_context": c, "kind": "note", "content": "n", "idempotency_key": "k"},
            "replayed",
            "",
        ),
        (
            memory_add,
            {"write_context": c, "kind": "note", "content": "m", "idempotency_key": "k"},
            "rejected",
            "idempotency_conflict",
        ),
        (task_create, {"write_context": c, "title": "t", "description": "d"}, "success", ""),
        (
            task_update,
            {"write_context": c, "task_id": task["id"], "expected_version": 1, "status": "done"},
            "rejected",
            "invalid_transition",
        ),
        (
            task_update,
            {"write_context": c, "task_id": task["id"], "expected_version": 3, "next_step": "x"},
            "rejected",
            "stale_version",
        ),
        (
            task_update,
            {"write_context": c, "task_id": task["id"], "expected_version": 1, "next_step": "x"},
            "success",
            "",
        ),
        (
            state_put,
            {"write_context": {**c, "project": "x"}, "agent": "a", "body": "# Running summary\n-"},
            "rejected",
            "write_context_mismatch",
        ),
        (
            state_put,
            {"write_context": c, "agent": "a", "body": "# Running summary\n- ok"},
            "success",
            "",
        ),
    ]


def test_every_attempt_leaves_exactly_one_row_with_its_outcome(world: World) -> None:
    owner = world.caller("owner")
    for service, arguments, expected, code in _attempts(world):
        before = AuditEvent.objects.count()
        outcome(service, owner, **arguments)
        assert AuditEvent.objects.count() == before + 1, service.__name__
        event = last_audit(world.alpha)
        assert (event.operation, event.outcome, event.error_code) == (
            service.__name__,
            expected,
            code,
        )


def test_a_forbidden_attempt_is_one_rejected_row(world: World) -> None:
    viewer = world.caller("viewer")
    before = AuditEvent.objects.count()
    rejected("forbidden", task_create, viewer, write_context=wc(viewer), title="t", description="d")
    assert AuditEvent.objects.count() == before + 1
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code, event.user_id) == (
        "task_create",
        "rejected",
        "forbidden",
        world.viewer.pk,
    )


@pytest.mark.django_db(transaction=True)
def test_a_success_is_recorded_inside_the_operations_transaction(world: World) -> None:
    owner = world.caller("owner")
    with audit_inserts_seen() as seen:
        new_task(owner)
    assert seen == [True]


@pytest.mark.django_db(transaction=True)
def test_a_rejection_is_recorded_after_the_rollback_and_survives_it(world: World) -> None:
    """The first use of a key inserts its record before the work; the work then fails, the
    transaction rolls back (no record, no memory), and the rejection's row is still written."""
    owner = world.caller("owner")
    with audit_inserts_seen() as seen:
        rejected(
            "not_found",
            memory_add,
            owner,
            write_context=wc(owner),
            kind="decision",
            content="c",
            rationale="r",
            source="s",
            supersedes=MISSING,
            idempotency_key="k",
        )
    assert seen == [False]
    assert not IdempotencyRecord.objects.exists()
    assert not Memory.objects.exists()
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        "memory_add",
        "rejected",
        "not_found",
    )


@pytest.mark.django_db(transaction=True)
def test_a_rejected_update_is_audited_and_leaves_no_trace_of_its_work(world: World) -> None:
    owner = world.caller("owner")
    task = new_task(owner)
    update_task(owner, task, work_receipt=receipt("s-1"))
    before = Task.objects.values().get(pk=task["id"])
    with audit_inserts_seen() as seen:
        update_rejected(
            "duplicate_receipt",
            owner,
            task,
            expected_version=2,
            status="in_progress",
            work_receipt=receipt("s-1"),
        )
    assert seen == [False]
    assert Task.objects.values().get(pk=task["id"]) == before
    assert WorkReceipt.objects.count() == 1
    assert last_audit(world.alpha).error_code == "duplicate_receipt"


@pytest.mark.django_db(transaction=True)
def test_a_read_is_audited_once_outside_any_transaction(world: World) -> None:
    with audit_inserts_seen() as seen:
        continuity_context(world.caller("viewer"))
        outcome(task_get, world.caller("viewer"), task_id=MISSING)
    assert seen == [False, False]


MARK = "ZEBRA-SECRET-7f3a"


def test_audit_rows_never_hold_memory_or_task_text(world: World) -> None:
    owner = world.caller("owner")
    c = wc(owner)
    memory = add_note(owner, f"{MARK} content", title=f"{MARK} title", idempotency_key=MARK)
    add_note(owner, f"{MARK} content", title=f"{MARK} title", idempotency_key=MARK)
    decision = as_json(
        memory_add(
            owner,
            write_context=c,
            kind="decision",
            content=f"{MARK} decision",
            rationale=f"{MARK} rationale",
            source=f"{MARK} source",
        )
    )
    task = new_task(owner, f"{MARK} task", description=f"{MARK} goal", next_step=f"{MARK} step")
    update_task(
        owner,
        task,
        status="in_progress",
        next_step=f"{MARK} next",
        blockers=[f"{MARK} blocker"],
        handoff_note=f"{MARK} handoff",
        work_receipt=receipt(
            f"{MARK}-session",
            summary=f"{MARK} summary",
            tests=[{"name": f"{MARK} test", "result": "passed"}],
            next_step=f"{MARK} receipt step",
            blockers=[f"{MARK} receipt blocker"],
        ),
    )
    state_put(owner, write_context=c, agent="codex", body=f"# Running summary\n- {MARK}")
    memory_search(owner, query=MARK)
    memory_get(owner, memory_id=decision["id"])
    task_get(owner, task_id=task["id"])
    continuity_context(owner)
    # Rejections whose inputs carry the text too.
    outcome(memory_add, owner, write_context=c, kind="note", content=f"{MARK}\x00")
    outcome(memory_add, owner, write_context=c, kind=MARK, content=MARK)
    outcome(memory_add, owner, write_context=c, kind="note", content="x", idempotency_key=MARK)
    outcome(task_create, owner, write_context=c, title=MARK * 100, description=MARK)
    outcome(task_update, owner, write_context=c, task_id=MARK, expected_version=1)
    outcome(state_put, owner, write_context=c, agent="codex", body=f"I'm sorry {MARK}")
    outcome(memory_search, owner, query=MARK * 20)
    outcome(task_list, owner, cursor=MARK)

    rows = list(AuditEvent.objects.values())
    assert len(rows) >= 20
    assert memory["id"] in {row["target_id"] for row in rows}
    leaked = [row for row in rows if MARK.lower() in repr(list(row.values())).lower()]
    assert leaked == []
