"""Real concurrency on PostgreSQL: real threads, one connection each, released together by a
barrier. Each race runs for ROUNDS rounds, because a race that is lost once in a while is still
a bug."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from django.db import connection

from audit.models import AuditEvent
from audit.recorder import flush_pending
from continuity.models import IdempotencyRecord, Memory, StateVersion, Task, WorkReceipt
from continuity.services import memory_add, state_put, task_update
from core.access import Caller
from core.errors import HeyAiraError, Unavailable
from tests.continuity.helpers import Crew, add_decision, as_json, new_task, receipt
from tests.factories import World, wc
from tests.live import behind_pgbouncer, maintenance_connection

ROUNDS = 20
# See _try: how often one call may meet a lock timeout before the race counts as lost.
LOCK_TIMEOUT_RETRIES = 5
LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE for lock_timeout

_retries: Counter[str] = Counter()  # lock timeouts retried, by request id
_retries_lock = threading.Lock()

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

# An advisory lock every race holds while it runs (any 64-bit number, the same everywhere).
RACE_LOCK = 7_243_911_004_552_001


@pytest.fixture(autouse=True)
def one_race_at_a_time(transactional_db: None) -> Iterator[None]:
    """Hold a server-wide lock for the whole test, then wait until its threads' connections
    are gone: PostgreSQL allows 100 connections, so two races must never run side by side
    under xdist. The lock lives in the `postgres` database because advisory locks are per
    database and each xdist worker has its own test database."""
    guard = maintenance_connection()
    try:
        guard.execute("SELECT pg_advisory_lock(%s)", [RACE_LOCK])
        yield
        _wait_for_other_connections_to_end()
    finally:
        guard.close()  # releases the lock


def _wait_for_other_connections_to_end(limit: float = 15.0) -> None:
    """A closed connection's server process takes a moment to exit; the next race must not
    count on its slot before it has. Behind PgBouncer the server connections are PgBouncer's
    and stay (a bounded pool): there is nothing to wait for."""
    if behind_pgbouncer():
        return
    deadline = time.monotonic() + limit
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            (others,) = cursor.fetchone() or (0,)
            if others == 0:
                return
            assert time.monotonic() < deadline, f"{others} connections outlived their threads"
            time.sleep(0.05)


def _try(service: Any, caller: Caller, **arguments: Any) -> tuple[str, Any]:
    """("ok", the result as sent) or (error code, error details).

    A lock wait past DATABASE_LOCK_TIMEOUT_MS is answered `unavailable` with nothing done. Under
    64 writers on two busy cores the last in the queue for one project's audit chain can wait
    that long; a client then retries after `retry_after`, and so does this harness. Only that
    answer is retried: a deadlock or an exhausted server still fails the race."""
    for _ in range(LOCK_TIMEOUT_RETRIES):
        try:
            return "ok", as_json(service(caller, **arguments))
        except Unavailable as error:
            if not _lock_timeout(error):
                return error.code, error.details
            with _retries_lock:
                _retries[caller.request_id] += 1
            time.sleep(error.retry_after)
        except HeyAiraError as error:
            return error.code, error.details
    return "unavailable", "lock timeouts on every try"


def _lock_timeout(error: Unavailable) -> bool:
    cause = error.__cause__
    driver = cause.__cause__ if cause is not None else None
    return getattr(driver, "sqlstate", None) == LOCK_NOT_AVAILABLE


def _callers(world: World, count: int) -> list[Caller]:
    """One contributor caller per thread, each with its own request id (so that its audit row
    can be found)."""
    return [world.caller("contributor") for _ in range(count)]


def _audit_outcomes(callers: list[Caller], operation: str) -> Counter[tuple[str, str]]:
    """The outcomes audited for these callers, less the lock timeouts _try retried: each of
    those must have its own row too."""
    flush_pending()  # a rejection whose audit row itself met a lock timeout waits there
    rows = AuditEvent.objects.filter(
        request_id__in=[c.request_id for c in callers], operation=operation
    )
    outcomes = Counter(rows.values_list("outcome", "error_code"))
    retried = sum(_retries[c.request_id] for c in callers)
    assert outcomes.pop(("rejected", "unavailable"), 0) == retried
    return outcomes


# --- 64 updates naming one version ----------------------------------------------------------


def _update_v1(i: int, *, callers: list[Caller], task_id: str) -> tuple[str, Any]:
    return _try(
        task_update,
        callers[i],
        write_context=wc(callers[i]),
        task_id=task_id,
        expected_version=1,
        status="in_progress",
        next_step=f"thread {i}",
        work_receipt=receipt(f"session-{i}"),
    )


def _update_race(world: World, crew: Crew, round_: int) -> None:
    task = new_task(world.caller("owner"), f"race {round_}")
    callers = _callers(world, 64)

    results = crew.round(partial(_update_v1, callers=callers, task_id=task["id"]))

    codes = Counter(code for code, _ in results)
    assert codes == {"ok": 1, "stale_version": 63}, (round_, codes)
    assert all(d == {"current_version": 2} for c, d in results if c == "stale_version")
    (winner,) = [i for i, (code, _) in enumerate(results) if code == "ok"]
    stored = Task.objects.get(pk=task["id"])
    assert (stored.version, stored.next_step) == (2, f"thread {winner}")
    receipts = WorkReceipt.objects.filter(task_id=task["id"])
    assert list(receipts.values_list("session_ref", flat=True)) == [f"session-{winner}"]
    assert _audit_outcomes(callers, "task_update") == {
        ("success", ""): 1,
        ("rejected", "stale_version"): 63,
    }


def test_64_updates_naming_one_version_give_one_success_and_63_stale(world: World) -> None:
    with Crew(64) as crew:
        for round_ in range(ROUNDS):
            _update_race(world, crew, round_)


# --- one idempotency key --------------------------------------------------------------------


def _add_note(i: int, *, callers: list[Caller], contents: list[str], key: str) -> tuple[str, Any]:
    return _try(
        memory_add,
        callers[i],
        write_context=wc(callers[i]),
        kind="note",
        content=contents[i % len(contents)],
        idempotency_key=key,
    )


def _same_payload_race(world: World, crew: Crew, round_: int) -> None:
    callers = _callers(world, 64)
    content, key = f"the deploy runbook, round {round_}", f"key-{round_}"

    results = crew.round(partial(_add_note, callers=callers, contents=[content], key=key))

    assert {code for code, _ in results} == {"ok"}, (round_, results)
    first = results[0][1]
    assert all(result == first for _, result in results)
    assert Memory.objects.filter(content=content).count() == 1
    assert str(Memory.objects.get(content=content).pk) == first["id"]
    assert IdempotencyRecord.objects.filter(key=key).count() == 1
    assert _audit_outcomes(callers, "memory_add") == {
        ("success", ""): 1,
        ("replayed", ""): 63,
    }


def test_64_adds_with_one_key_and_one_payload_make_one_row(world: World) -> None:
    with Crew(64) as crew:
        for round_ in range(ROUNDS):
            _same_payload_race(world, crew, round_)


def _two_payloads_race(world: World, crew: Crew, round_: int) -> None:
    callers = _callers(world, 64)
    payloads = [f"round {round_}: payload A", f"round {round_}: payload B"]

    results = crew.round(
        partial(_add_note, callers=callers, contents=payloads, key=f"two-{round_}")
    )

    (row,) = Memory.objects.filter(content__in=payloads)
    landed = payloads.index(row.content)
    same = [results[i] for i in range(64) if i % 2 == landed]
    other = [results[i] for i in range(64) if i % 2 != landed]
    assert [code for code, _ in same] == ["ok"] * 32, (round_, same)
    assert all(result == same[0][1] for _, result in same)
    assert same[0][1]["id"] == str(row.pk)
    assert [code for code, _ in other] == ["idempotency_conflict"] * 32, (round_, other)
    assert _audit_outcomes(callers, "memory_add") == {
        ("success", ""): 1,
        ("replayed", ""): 31,
        ("rejected", "idempotency_conflict"): 32,
    }


def test_one_key_with_two_payloads_makes_one_row_31_replays_and_32_conflicts(
    world: World,
) -> None:
    with Crew(64) as crew:
        for round_ in range(ROUNDS):
            _two_payloads_race(world, crew, round_)


# --- one session_ref ------------------------------------------------------------------------


def _report_until_landed(i: int, *, callers: list[Caller], task_id: str) -> str:
    """A session that retries on stale_version until its receipt lands or is refused."""
    for attempt in range(50):
        version = Task.objects.values_list("version", flat=True).get(pk=task_id)
        code, _ = _try(
            task_update,
            callers[i],
            write_context=wc(callers[i]),
            task_id=task_id,
            expected_version=version,
            handoff_note=f"thread {i} attempt {attempt}",
            work_receipt=receipt("shared-session", summary=f"thread {i}"),
        )
        if code != "stale_version":
            return code
    return "gave up"


def _receipt_race(world: World, crew: Crew, round_: int) -> None:
    task = new_task(world.caller("owner"), f"receipt race {round_}")
    callers = _callers(world, 2)

    results = crew.round(partial(_report_until_landed, callers=callers, task_id=task["id"]))

    assert sorted(results) == ["duplicate_receipt", "ok"], (round_, results)
    receipts = WorkReceipt.objects.filter(task_id=task["id"])
    assert receipts.count() == 1
    assert receipts.get().summary == f"thread {results.index('ok')}"
    assert Task.objects.get(pk=task["id"]).version == 2


def test_two_receipts_with_one_session_ref_never_both_land(world: World) -> None:
    """Two sessions report the same session_ref on one task, each retrying on stale_version
    until it lands or is told the receipt exists: exactly one receipt, one update."""
    with Crew(2) as crew:
        for round_ in range(ROUNDS * 2):
            _receipt_race(world, crew, round_)


# --- beyond the list: supersedes and running summaries -------------------------------


def _supersede(i: int, *, callers: list[Caller], old_id: str) -> str:
    code, _ = _try(
        memory_add,
        callers[i],
        write_context=wc(callers[i]),
        kind="decision",
        content=f"successor {i}",
        rationale="r",
        source="s",
        supersedes=old_id,
    )
    return code


def _supersede_race(world: World, crew: Crew, round_: int) -> None:
    old = add_decision(world.caller("owner"), f"old decision {round_}")
    callers = _callers(world, 16)

    results = crew.round(partial(_supersede, callers=callers, old_id=old["id"]))

    assert Counter(results) == {"ok": 1, "validation_error": 15}, (round_, results)
    assert Memory.objects.filter(supersedes_id=old["id"]).count() == 1


def test_concurrent_decisions_superseding_one_decision_leave_one_successor(
    world: World,
) -> None:
    with Crew(16) as crew:
        for round_ in range(ROUNDS):
            _supersede_race(world, crew, round_)


def _put_first(i: int, *, callers: list[Caller], agent: str) -> tuple[str, Any]:
    return _try(
        state_put,
        callers[i],
        write_context=wc(callers[i]),
        agent=agent,
        body=f"# Running summary\n- written by thread {i}",
        expected_version=0,
    )


def _state_race(world: World, crew: Crew, round_: int) -> None:
    callers = _callers(world, 16)
    agent = f"agent-{round_}"

    results = crew.round(partial(_put_first, callers=callers, agent=agent))

    assert Counter(code for code, _ in results) == {"ok": 1, "stale_version": 15}
    assert all(d == {"current_version": 1} for c, d in results if c == "stale_version")
    assert StateVersion.objects.filter(agent=agent).count() == 1


def test_concurrent_summaries_naming_one_version_append_once(world: World) -> None:
    with Crew(16) as crew:
        for round_ in range(ROUNDS):
            _state_race(world, crew, round_)
