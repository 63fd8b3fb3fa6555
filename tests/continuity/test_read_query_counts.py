"""Every read is bounded: the same number of SQL queries with 3 rows or 300 of each kind.

continuity_context has its own test (test_continuity_context_budget.py). Each count here
includes the audit row the read writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from continuity.models import Memory, StateVersion, Task, WorkReceipt
from continuity.selectors import (
    memory_get,
    memory_search,
    server_identity,
    state_get,
    task_get,
    task_list,
)
from core.access import Caller
from tests.continuity.helpers import as_json
from tests.factories import World

# read -> (its queries, a call that uses the data made by `fill`)
READS: dict[str, tuple[int, Callable[[Caller, dict[str, Any]], Any]]] = {
    "server_identity": (1, lambda c, ids: as_json(server_identity(c))),
    "memory_get": (3, lambda c, ids: as_json(memory_get(c, memory_id=ids["memory"]))),
    "memory_search": (2, lambda c, ids: as_json(memory_search(c, query="deploy", limit=50))),
    "task_get": (3, lambda c, ids: as_json(task_get(c, task_id=ids["task"]))),
    "task_list": (2, lambda c, ids: as_json(task_list(c, limit=100))),
    "task_list with a cursor": (
        2,
        lambda c, ids: as_json(
            task_list(c, limit=5, cursor=as_json(task_list(c, limit=5))["next_cursor"])
        ),
    ),
    "state_get": (2, lambda c, ids: as_json(state_get(c, agent="codex"))),
}


def fill(world: World, rows: int) -> dict[str, Any]:
    """`rows` memories, tasks, receipts (all on one task) and state versions in alpha."""
    project = world.alpha
    memories = Memory.objects.bulk_create(
        Memory(project=project, kind="note", content=f"deploy step {n}", author="bulk")
        for n in range(rows)
    )
    tasks = Task.objects.bulk_create(
        Task(project=project, title=f"t{n}", description="d", created_by="b", updated_by="b")
        for n in range(rows)
    )
    WorkReceipt.objects.bulk_create(
        WorkReceipt(
            project=project,
            task=tasks[0],
            session_ref=f"s{n}",
            summary="s",
            task_version=1,
            author="bulk",
        )
        for n in range(rows)
    )
    StateVersion.objects.bulk_create(
        StateVersion(
            project=project,
            agent="codex",
            version=n + 1,
            body="# Running summary\n- x",
            author="bulk",
        )
        for n in range(rows)
    )
    return {"memory": memories[0].pk, "task": tasks[0].pk}


@pytest.mark.django_db
@pytest.mark.parametrize("rows", [3, 300])
@pytest.mark.parametrize("read", list(READS))
def test_each_read_makes_a_fixed_number_of_queries(
    world: World, django_assert_num_queries: Any, read: str, rows: int
):
    queries, call = READS[read]
    ids = fill(world, rows)
    owner = world.caller("owner")
    extra = 2 if read == "task_list with a cursor" else 0  # the first page, fetched to get a cursor
    with django_assert_num_queries(queries + extra):
        call(owner, ids)
