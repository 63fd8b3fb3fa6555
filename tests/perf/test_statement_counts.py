"""The SQL statements of each operation, authentication included, pinned in one table.

A count is the whole unit of database work of one request: authenticating an API key (one
query: the key, its user, project and the member's role) and the operation with its audit row.
These tests run inside the test's own transaction, so an operation's transaction shows as
SAVEPOINT and RELEASE where a real request sends BEGIN and COMMIT: the count is the same.

When the audit log's hash chain lands (a per-project head locked and read, then advanced), each
audited operation grows by its statements: adjust the table here, and bench/floor.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from continuity.catalog import OPERATIONS
from core.access import Caller
from core.errors import HeyAiraError
from identity import authn
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.factories import World
from tests.perf.statement_log import statements_sent

Arguments = Callable[[dict[str, Any]], dict[str, Any]]

RECEIPT = {
    "session_ref": "s-1",
    "summary": "Did a step.",
    "tests": [{"name": "t", "result": "passed"}],
}

# operation (and a variant) -> (statements, the operation's name, its arguments from `made`)
STATEMENTS: dict[str, tuple[int, str, Arguments]] = {
    # a key, a memory: BEGIN, INSERT key ON CONFLICT, INSERT memory, UPDATE key, audit, COMMIT
    "memory_add": (
        7,
        "memory_add",
        lambda m: {"kind": "note", "content": "A note.", "idempotency_key": "k-1"},
    ),
    "memory_add without a key": (5, "memory_add", lambda m: {"kind": "note", "content": "A note."}),
    # BEGIN, INSERT key ON CONFLICT (taken), SELECT the stored result, audit (replayed), COMMIT
    "memory_add replayed": (
        6,
        "memory_add",
        lambda m: {"kind": "note", "content": "First.", "idempotency_key": "k-0"},
    ),
    "memory_add superseding a decision": (
        7,
        "memory_add",
        lambda m: {
            "kind": "decision",
            "content": "Use B.",
            "rationale": "B is simpler.",
            "source": "review",
            "supersedes": m["decision"],
        },
    ),
    "task_create": (
        7,
        "task_create",
        lambda m: {"title": "T", "description": "D", "idempotency_key": "t-1"},
    ),
    # BEGIN, UPDATE ... RETURNING (the task's readiness too: subqueries in its RETURNING),
    # INSERT receipt, audit (the database links it into the chain), COMMIT
    "task_update with a receipt": (
        6,
        "task_update",
        lambda m: {
            "task_id": m["task"],
            "expected_version": 1,
            "next_step": "Next.",
            "work_receipt": RECEIPT,
        },
    ),
    "task_update": (
        5,
        "task_update",
        lambda m: {"task_id": m["task"], "expected_version": 1, "status": "in_progress"},
    ),
    "task_update with a repository_ref": (
        6,
        "task_update",
        lambda m: {
            "task_id": m["task"],
            "expected_version": 1,
            "repository_ref": {"repository": "acme/app", "branch": "main"},
        },
    ),
    # A refusal reads the task (and the receipt) to say why, rolls back, then writes the
    # rejection's audit row; here the rollback shows as ROLLBACK TO and RELEASE (one ROLLBACK in
    # a real request, so 7 there).
    "task_update refused as stale": (
        8,
        "task_update",
        lambda m: {"task_id": m["task"], "expected_version": 9, "work_receipt": RECEIPT},
    ),
    # authentication, BEGIN, the lease's row, UPDATE its expiry (the version stays), audit,
    # COMMIT
    "task_heartbeat": (
        6,
        "task_heartbeat",
        lambda m: {"task_id": m["claimed"], "session_ref": "s-claim"},
    ),
    # BEGIN, the longest-expired lease (none), the oldest ready task (FOR UPDATE), the claim's
    # UPDATE, the claimed task with its readiness, audit, COMMIT: the same at any size (see
    # bench/claim_queue.py --leases)
    "task_claim_next": (8, "task_claim_next", lambda m: {"session_ref": "s-next"}),
    "state_put": (
        6,
        "state_put",
        lambda m: {"agent": "codex", "body": "# Running summary\n- one step done"},
    ),
    "server_identity": (2, "server_identity", lambda m: {}),
    "continuity_context": (8, "continuity_context", lambda m: {}),
    "memory_get": (4, "memory_get", lambda m: {"memory_id": m["decision"]}),
    "memory_search": (3, "memory_search", lambda m: {"query": "deploy"}),
    "task_get": (4, "task_get", lambda m: {"task_id": m["task"]}),
    "task_list": (3, "task_list", lambda m: {}),
    "state_get": (3, "state_get", lambda m: {"agent": "codex"}),
}


def prepare(world: World) -> tuple[str, dict[str, Any]]:
    """A contributor's API key (used once, so its last_used_at is fresh) and some rows."""
    issued = api_key_create(
        operator_caller(world.alpha),
        user_id=world.contributor.pk,
        label="counts",
        scopes=["continuity:read", "continuity:write"],
    )
    header = f"Bearer {issued.secret}"
    caller = authn.authenticate(header, resource="mcp", request_id="warm-up")
    made = {
        "task": run(caller, "task_create", {"title": "T", "description": "D"})["id"],
        "decision": run(
            caller,
            "memory_add",
            {"kind": "decision", "content": "Use A.", "rationale": "R", "source": "s"},
        )["id"],
    }
    run(caller, "memory_add", {"kind": "note", "content": "First.", "idempotency_key": "k-0"})
    run(caller, "state_put", {"agent": "codex", "body": "# Running summary\n- started"})
    claimed = run(caller, "task_create", {"title": "C", "description": "D"})["id"]
    claim = {"task_id": claimed, "expected_version": 1, "status": "in_progress"}
    run(caller, "task_update", {**claim, "session_ref": "s-claim"})
    made["claimed"] = claimed
    return header, made


def run(caller: Caller, name: str, arguments: dict[str, Any]) -> Any:
    arguments = {"write_context": caller.write_context.as_dict(), **arguments}
    if not OPERATIONS[name].writes:
        arguments.pop("write_context")
    return OPERATIONS[name].operation.call(caller, arguments).model_dump(mode="json")


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(STATEMENTS))
def test_each_operation_makes_its_pinned_number_of_statements(world: World, case: str):
    expected, name, arguments = STATEMENTS[case]
    header, made = prepare(world)
    with statements_sent(connection) as statements:
        caller = authn.authenticate(header, resource="mcp", request_id="counted")
        if "refused" in case:
            with pytest.raises(HeyAiraError):
                run(caller, name, arguments(made))
        else:
            run(caller, name, arguments(made))
    sent = [sql[:100] for sql in statements]
    assert len(sent) == expected, "\n".join(sent)
