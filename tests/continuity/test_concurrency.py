"""Real concurrency on PostgreSQL: real threads, one connection each, lined up on a barrier.

Each race runs for ROUNDS rounds, because a race that is lost once in a while is still a bug.
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

import pytest

from audit.models import AuditEvent
from continuity.models import IdempotencyRecord, Memory, StateVersion, Task, WorkReceipt
from continuity.services import memory_add, state_put, task_update
from heyaira.errors import HeyAiraError
from projects.access import Caller
from tests.continuity.helpers import add_decision, in_threads, new_task, receipt
from tests.factories import World, wc

ROUNDS = 20

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    # PostgreSQL allows 100 connections: these tests must never run beside each other.
    pytest.mark.xdist_group("pg-concurrency"),
]


def _try(service: Any, caller: Caller, **arguments: Any) -> tuple[str, Any]:
    """("ok", result) or (error code, error details)."""
    try:
        return "ok", service(caller, **arguments)
    except HeyAiraError as error:
        return error.code, error.details


def _callers(world: World, role: str, count: int) -> list[Caller]:
    """One caller per thread, each with its own request id (so its audit row can be found)."""
    return [world.caller(role) for _ in range(count)]


def _audit_outcomes(callers: list[Caller], operation: str) -> Counter[tuple[str, str]]:
    rows = AuditEvent.objects.filter(
        request_id__in=[c.request_id for c in callers], operation=operation
    )
    return Counter(rows.values_list("outcome", "error_code"))


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


def test_64_updates_naming_one_version_give_one_success_and_63_stale(world: World) -> None:
    owner = world.caller("owner")
    for round_ in range(ROUNDS):
        task = new_task(owner, f"race {round_}")
        callers = _callers(world, "contributor", 64)

        results = in_threads(64, partial(_update_v1, callers=callers, task_id=task["id"]))

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


def test_64_adds_with_one_key_and_one_payload_make_one_row(world: World) -> None:
    for round_ in range(ROUNDS):
        callers = _callers(world, "contributor", 64)
        content, key = f"the deploy runbook, round {round_}", f"key-{round_}"

        results = in_threads(64, partial(_add_note, callers=callers, contents=[content], key=key))

        assert {code for code, _ in results} == {"ok"}, results
        first = results[0][1]
        assert all(result == first for _, result in results)
        assert Memory.objects.filter(content=content).count() == 1
        assert str(Memory.objects.get(content=content).pk) == first["id"]
        assert IdempotencyRecord.objects.filter(key=key).count() == 1
        assert _audit_outcomes(callers, "memory_add") == {
            ("success", ""): 1,
            ("replayed", ""): 63,
        }


def test_one_key_with_two_payloads_makes_one_row_31_replays_and_32_conflicts(
    world: World,
) -> None:
    for round_ in range(ROUNDS):
        callers = _callers(world, "contributor", 64)
        payloads = [f"round {round_}: payload A", f"round {round_}: payload B"]

        results = in_threads(
            64, partial(_add_note, callers=callers, contents=payloads, key=f"two-{round_}")
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


def test_two_receipts_with_one_session_ref_never_both_land(world: World) -> None:
    """Two sessions report the same session_ref on one task, each retrying on stale_version
    until it lands or is told the receipt exists: exactly one receipt, one update."""
    owner = world.caller("owner")
    for round_ in range(ROUNDS * 2):
        task = new_task(owner, f"receipt race {round_}")
        callers = _callers(world, "contributor", 2)

        results = in_threads(2, partial(_report_until_landed, callers=callers, task_id=task["id"]))

        assert sorted(results) == ["duplicate_receipt", "ok"], (round_, results)
        receipts = WorkReceipt.objects.filter(task_id=task["id"])
        assert receipts.count() == 1
        assert receipts.get().summary == f"thread {results.index('ok')}"
        assert Task.objects.get(pk=task["id"]).version == 2


# --- beyond the list: supersedes and running summaries -------------------------------


def _supersede(i: int, *, callers: list[Caller], old_id: str) -> str:
    return _try(
        memory_add,
        callers[i],
        write_context=wc(callers[i]),
        kind="decision",
        content=f"successor {i}",
        rationale="r",
        source="s",
        supersedes=old_id,
    )[0]


def test_concurrent_decisions_superseding_one_decision_leave_one_successor(
    world: World,
) -> None:
    owner = world.caller("owner")
    for round_ in range(ROUNDS):
        old = add_decision(owner, f"old decision {round_}")
        callers = _callers(world, "contributor", 16)

        results = in_threads(16, partial(_supersede, callers=callers, old_id=old["id"]))

        assert Counter(results) == {"ok": 1, "validation_error": 15}, (round_, results)
        assert Memory.objects.filter(supersedes_id=old["id"]).count() == 1


def _put_first(i: int, *, callers: list[Caller], agent: str) -> tuple[str, Any]:
    return _try(
        state_put,
        callers[i],
        write_context=wc(callers[i]),
        agent=agent,
        body=f"# Running summary\n- written by thread {i}",
        expected_version=0,
    )


def test_concurrent_summaries_naming_one_version_append_once(world: World) -> None:
    for round_ in range(ROUNDS):
        callers = _callers(world, "contributor", 16)
        agent = f"agent-{round_}"

        results = in_threads(16, partial(_put_first, callers=callers, agent=agent))

        assert Counter(code for code, _ in results) == {"ok": 1, "stale_version": 15}
        assert all(d == {"current_version": 1} for c, d in results if c == "stale_version")
        assert StateVersion.objects.filter(agent=agent).count() == 1
