"""task_claim_next and blocked_by under real concurrency on PostgreSQL: real threads, one
connection each, released together by a barrier, for ROUNDS rounds."""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

import pytest

from audit.models import AuditEvent
from continuity.models import Task, TaskDependency
from continuity.services import task_claim_next, task_update
from core.access import Caller
from tests.continuity.helpers import Crew, as_json, new_task, update_task
from tests.continuity.test_concurrency import (  # noqa: F401 (an autouse fixture)
    ROUNDS,
    _try,
    one_race_at_a_time,
)
from tests.factories import World, wc

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

CLAIMERS = 64


def _claim(i: int, *, callers: list[Caller]) -> tuple[str, Any]:
    return _try(task_claim_next, callers[i], write_context=wc(callers[i]))


def _claim_round(world: World, crew: Crew, round_: int, claimed: Counter[str]) -> int:
    owner = world.caller("owner")
    # Older than the ready tasks, so every claimer must pass over them: blocked by an open task.
    holder = update_task(owner, new_task(owner, f"holder {round_}"), status="in_progress")
    waiting = {
        new_task(owner, f"waiting {round_}.{n}", blocked_by=[holder["task"]["id"]])["id"]
        for n in range(4)
    }
    # Fewer ready tasks than claimers in some rounds, more in others.
    ready_count = 16 + (round_ * 23) % 80
    ready = [new_task(owner, f"ready {round_}.{n}")["id"] for n in range(ready_count)]
    callers = [world.caller("contributor") for _ in range(CLAIMERS)]

    results = crew.round(partial(_claim, callers=callers))

    assert {code for code, _ in results} == {"ok"}, (round_, results)
    winners = [r["task"]["id"] for _, r in results if r["task"] is not None]
    expected = min(ready_count, CLAIMERS)
    assert len(winners) == len(set(winners)) == expected, round_
    # Exactly the oldest ready tasks: a claimer takes the oldest one nobody else holds.
    assert set(winners) == set(ready[:expected]), round_
    assert all(r["task"]["version"] == 2 for _, r in results if r["task"] is not None)
    stored = dict(Task.objects.filter(pk__in=ready).values_list("pk", "status"))
    assert Counter(stored.values()) == Counter(in_progress=expected, todo=ready_count - expected)
    assert set(Task.objects.filter(pk__in=waiting).values_list("status", flat=True)) == {"todo"}
    events = AuditEvent.objects.filter(
        request_id__in=[c.request_id for c in callers], operation="task_claim_next"
    )
    assert Counter(events.values_list("outcome", flat=True)) == {"success": CLAIMERS}
    assert sorted(e for e in events.values_list("target_id", flat=True) if e) == sorted(winners)
    claimed.update(winners)
    # What this round left ready is claimed one by one, oldest first, before the next round.
    leftover = ready[expected:]
    later = [
        as_json(task_claim_next(owner, write_context=wc(owner)))["task"]["id"] for _ in leftover
    ]
    assert later == leftover
    claimed.update(later)
    return ready_count


def test_64_concurrent_claims_take_each_ready_task_exactly_once(world: World) -> None:
    total = 0
    claimed: Counter[str] = Counter()
    with Crew(CLAIMERS) as crew:
        for round_ in range(ROUNDS):
            total += _claim_round(world, crew, round_, claimed)
    assert len(claimed) == total
    assert set(claimed.values()) == {1}


# --- three updates closing one cycle at once ------------------------------------------------


def _link(i: int, *, callers: list[Caller], tasks: list[dict[str, Any]]) -> str:
    """Thread i makes task i blocked by task i+1 (mod 3): all three together are a cycle."""
    code, _ = _try(
        task_update,
        callers[i],
        write_context=wc(callers[i]),
        task_id=tasks[i]["id"],
        expected_version=1,
        blocked_by=[tasks[(i + 1) % 3]["id"]],
    )
    return code


def _cycle_round(world: World, crew: Crew, round_: int) -> None:
    owner = world.caller("owner")
    tasks = [new_task(owner, f"cycle {round_}.{n}") for n in range(3)]
    callers = [world.caller("contributor") for _ in range(3)]

    results = crew.round(partial(_link, callers=callers, tasks=tasks))

    assert Counter(results) == {"ok": 2, "validation_error": 1}, (round_, results)
    ids = [t["id"] for t in tasks]
    edges = TaskDependency.objects.filter(task_id__in=ids)
    assert edges.count() == 2
    refused = results.index("validation_error")
    assert Task.objects.get(pk=ids[refused]).version == 1


def test_three_concurrent_updates_closing_a_cycle_through_three_tasks_refuse_one(
    world: World,
) -> None:
    with Crew(3) as crew:
        for round_ in range(ROUNDS):
            _cycle_round(world, crew, round_)
