"""The floor: what PostgreSQL alone sustains for HeyAira's write transactions, from raw psycopg.

Each transaction below issues, statement for statement, what HeyAira issues for the operation
once the request is authenticated (tests/perf/test_statement_counts.py pins HeyAira's side).
When the audit log's hash chain lands (a per-project head row locked and read, then advanced),
add its statements to `audit_insert` so that the floor keeps doing the same work as the app.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from audit.chain import chain_of, digest

OPEN = ("todo", "in_progress", "blocked")


def audit_insert(
    cursor: psycopg.Cursor[Any],
    fixture: dict[str, Any],
    operation: str,
    target: str,
    target_type: str,
) -> None:
    """The operation's success row (audit.recorder), in the operation's transaction: its
    chain and digest computed as the recorder computes them; the database's trigger links it
    into the chain under the chain head's row lock, as for HeyAira's own rows."""
    fields: dict[str, Any] = {
        "id": uuid.uuid4(),
        "occurred_at": datetime.now(UTC),
        "request_id": uuid.uuid4().hex,
        "actor_type": "api_key",
        "actor_id": str(fixture["api_key_id"]),
        "actor_label": fixture["actor_label"],
        "user_id": fixture["user_id"],
        "client_id": "",
        "credential_kind": "api_key",
        "credential_fingerprint": fixture["fingerprint"],
        "resource": fixture["write_context"]["resource"],
        "instance": "bench",
        "operation": operation,
        "target_type": target_type,
        "target_id": target,
        "outcome": "success",
        "error_code": "",
        "project_id": fixture["project_id"],
    }
    fields["chain"] = chain_of(fields["project_id"])
    fields["digest"] = digest(fields)
    names = ", ".join(fields)
    marks = ", ".join(["%s"] * len(fields))
    cursor.execute(
        f"INSERT INTO audit_auditevent ({names}) VALUES ({marks})",  # noqa: S608 (names are ours)
        tuple(fields.values()),
    )


def task_update_transaction(
    cursor: psycopg.Cursor[Any], fixture: dict[str, Any], task: dict[str, Any], n: int
) -> None:
    """task_update with a work receipt: the compare-and-set UPDATE ... RETURNING, the receipt,
    the audit row."""
    now = datetime.now(UTC)
    cursor.execute("BEGIN")
    # As the app's: an update that keeps the status renews the lease of a task in progress,
    # and the WHERE admits only a task whose lease is free or the writer's (continuity.leases).
    cursor.execute(
        "UPDATE continuity_task SET version = version + 1, updated_at = %s, updated_by = %s, "
        "next_step = %s, "
        "lease_actor = CASE WHEN status = 'in_progress' THEN %s ELSE lease_actor END, "
        "lease_expires_at = CASE WHEN status = 'in_progress' THEN %s ELSE lease_expires_at END "
        "WHERE project_id = %s AND id = %s AND version = %s AND status = ANY(%s) "
        "AND (status <> 'in_progress' OR lease_expires_at IS NULL OR lease_actor = %s) "
        "RETURNING id, title, description, status, next_step, blockers, "
        "handoff_note, repository_ref, version, created_by, updated_by, created_at, updated_at, "
        "project_id, lease_actor, lease_session_ref, lease_expires_at, lease_seconds",
        (
            now,
            fixture["actor_label"],
            f"Step {n}",
            fixture["actor_label"],
            now + timedelta(seconds=900),
            fixture["project_id"],
            task["id"],
            task["version"],
            list(OPEN),
            fixture["actor_label"],
        ),
    )
    row = cursor.fetchone()
    if row is None:
        raise RuntimeError("the floor's compare-and-set matched no row")
    task["version"] = row[8]
    cursor.execute(
        "INSERT INTO continuity_workreceipt (id, session_ref, summary, tests, commits, "
        "next_step, blockers, task_version, author, created_at, project_id, task_id) "
        "VALUES (%s, %s, %s, %s, '[]', '', '[]', %s, %s, %s, %s, %s)",
        (
            uuid.uuid4(),
            f"floor-{task['id']}-{n}",
            "One step of the floor, with its receipt.",
            json.dumps([{"name": "make test", "result": "passed"}]),
            task["version"],
            fixture["actor_label"],
            now,
            fixture["project_id"],
            task["id"],
        ),
    )
    audit_insert(cursor, fixture, "task_update", str(task["id"]), "task")
    cursor.execute("COMMIT")


def memory_add_transaction(
    cursor: psycopg.Cursor[Any], fixture: dict[str, Any], task: dict[str, Any], n: int
) -> None:
    """memory_add with an idempotency key: the key claimed first (INSERT ... ON CONFLICT DO
    NOTHING), the memory, the key's stored result, the audit row."""
    now = datetime.now(UTC)
    record, memory = uuid.uuid4(), uuid.uuid4()
    cursor.execute("BEGIN")
    cursor.execute(
        "INSERT INTO continuity_idempotencyrecord (id, operation, key, fingerprint, result, "
        "created_at, project_id) VALUES (%s, 'memory_add', %s, %s, '{}', %s, %s) "
        "ON CONFLICT DO NOTHING",
        (record, f"floor-{task['id']}-{n}", "0" * 64, now, fixture["project_id"]),
    )
    cursor.execute(
        "INSERT INTO continuity_memory (id, kind, title, content, rationale, source, author, "
        "created_at, project_id, supersedes_id) VALUES (%s, 'note', %s, %s, '', '', %s, %s, %s, "
        "NULL)",
        (
            memory,
            f"Floor note {n}",
            "Observed during the throughput bench; " * 8,
            fixture["actor_label"],
            now,
            fixture["project_id"],
        ),
    )
    result = {"id": str(memory), "kind": "note", "created_at": now.isoformat()}
    cursor.execute(
        "UPDATE continuity_idempotencyrecord SET result = %s WHERE id = %s",
        (json.dumps(result), record),
    )
    audit_insert(cursor, fixture, "memory_add", str(memory), "memory")
    cursor.execute("COMMIT")


TRANSACTIONS = {"task_update": task_update_transaction, "memory_add": memory_add_transaction}


def _own_task(cursor: psycopg.Cursor[Any], fixture: dict[str, Any]) -> dict[str, Any]:
    task = {"id": uuid.uuid4(), "version": 1}
    now = datetime.now(UTC)
    cursor.execute(
        "INSERT INTO continuity_task (id, title, description, status, next_step, blockers, "
        "handoff_note, repository_ref, version, created_by, updated_by, created_at, updated_at, "
        "project_id, lease_actor, lease_session_ref) VALUES (%s, 'Floor task', "
        "'The task one floor process updates.', 'todo', '', '[]', '', NULL, 1, %s, %s, %s, %s, "
        "%s, '', '')",
        (
            task["id"],
            fixture["actor_label"],
            fixture["actor_label"],
            now,
            now,
            fixture["project_id"],
        ),
    )
    return task


def _worker(
    database_url: str,
    fixture: dict[str, Any],
    operation: str,
    seconds: float,
    ready: Any,
    go: Any,
    results: Any,
) -> None:
    latencies: list[float] = []
    failures: list[str] = []
    with psycopg.connect(database_url, autocommit=True) as connection:
        cursor = connection.cursor()
        task = _own_task(cursor, fixture)
        transaction = TRANSACTIONS[operation]
        n = 0
        ready.put(True)
        go.wait()
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            n += 1
            began = time.perf_counter()
            try:
                transaction(cursor, fixture, task, n)
            except psycopg.Error as error:
                failures.append(f"{type(error).__name__}: {error}"[:300])
                break
            latencies.append(time.perf_counter() - began)
    results.put((latencies, failures))


def run(
    database_url: str, fixture: dict[str, Any], operation: str, processes: int, seconds: float
) -> tuple[float, list[float], list[str]]:
    """`processes` connections running the operation's transaction back to back for `seconds`
    (after they all connected); the seconds, every latency and every failure."""
    context = multiprocessing.get_context("spawn")
    ready, go, results = context.Queue(), context.Event(), context.Queue()
    workers = [
        context.Process(
            target=_worker,
            args=(database_url, fixture, operation, seconds, ready, go, results),
        )
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    for _ in workers:  # every process connected and made its task: start them together
        ready.get(timeout=120)
    go.set()
    latencies: list[float] = []
    failures: list[str] = []
    for _ in workers:
        mine, failed = results.get(timeout=seconds + 60)
        latencies += mine
        failures += failed
    for worker in workers:
        worker.join(timeout=10)
    return seconds, latencies, failures
