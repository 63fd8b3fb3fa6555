"""continuity_context stays within its byte budget and its query count whatever the project
holds: 10 rows of each kind, 10,000 rows of each kind, and rows made to be as large as possible
in JSON (maximum lengths, multi-byte characters, quotes, backslashes, control characters).

The budget is measured on the compact UTF-8 JSON every transport sends (docs/architecture.md, "The
continuity protocol"): 16,000 bytes at the default limits, 64,000 at the caps."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Callable
from typing import Any

from continuity.models import (
    MAX_DEPENDENCIES,
    Memory,
    StateVersion,
    Task,
    TaskDependency,
    WorkReceipt,
)
from continuity.selectors import continuity_context
from continuity.services import state_put
from core.access import Caller
from projects.models import Project, ProjectRepository, Repository
from tests.continuity.helpers import add_decision, add_note, as_json, new_task, receipt, update_task
from tests.factories import World, wc

# Every call: repositories, memories, tasks, receipts, state, counts, and the audit row. A list
# whose limit is 0 costs no query (Django answers an empty slice without asking).
CONTEXT_QUERIES = 7

DEFAULT_LIMITS = {"memory_limit": 10, "task_limit": 20, "receipt_limit": 10}
CAPS = {"memory_limit": 50, "task_limit": 100, "receipt_limit": 50}
# (limits, the most bytes the JSON may take with them)
LIMIT_CASES: list[tuple[dict[str, int], int]] = [
    (DEFAULT_LIMITS, 16_000),
    ({}, 16_000),
    ({"memory_limit": 0, "task_limit": 0, "receipt_limit": 0}, 16_000),
    ({"memory_limit": 1, "task_limit": 1, "receipt_limit": 1}, 16_000),
    ({"memory_limit": 30, "task_limit": 5, "receipt_limit": 5}, 16_000),
    (CAPS, 64_000),
    ({"memory_limit": 10**6, "task_limit": 10**6, "receipt_limit": 10**6}, 64_000),
    ({"memory_limit": 50, "task_limit": 0, "receipt_limit": 0}, 64_000),
    ({"memory_limit": 0, "task_limit": 100, "receipt_limit": 0}, 64_000),
    ({"memory_limit": 0, "task_limit": 0, "receipt_limit": 50}, 64_000),
    ({"memory_limit": 17, "task_limit": 61, "receipt_limit": 29}, 64_000),
]


def json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _check_every_limit(
    caller: Caller, django_assert_num_queries: Any, agent: str, rows: int
) -> int:
    """Call with every limit case (with and without agent), `rows` rows of each kind in the
    project; return the largest size seen."""
    largest = 0
    for (limits, budget), with_agent in itertools.product(LIMIT_CASES, (False, True)):
        arguments: dict[str, Any] = {**limits, **({"agent": agent} if with_agent else {})}
        applied = {name: min(limits.get(name, DEFAULT_LIMITS[name]), CAPS[name]) for name in CAPS}
        empty_lists = sum(1 for limit in applied.values() if limit == 0)
        with django_assert_num_queries(CONTEXT_QUERIES - empty_lists):
            context = as_json(continuity_context(caller, **arguments))
        size = json_bytes(context)
        assert size <= budget, (limits, size)
        assert len(context["memories"]) == min(rows, applied["memory_limit"])
        assert len(context["tasks"]) == min(rows, applied["task_limit"])
        assert len(context["receipts"]) == min(rows, applied["receipt_limit"])
        assert context["state"] is not None
        largest = max(largest, size)
    return largest


# --- 10 rows of each kind, made through the services ----------------------------------------


def test_ten_rows_of_each_kind_fit_the_budget_in_constant_queries(
    world: World, django_assert_num_queries: Any
) -> None:
    owner = world.caller("owner")
    for n in range(10):
        if n % 2:
            add_decision(owner, f"Decision {n}: " + "because " * 40, title=f"D{n}")
        else:
            add_note(owner, f"Note {n}: " + "détails « quoted » " * 30, title=f"N{n}")
    for n in range(10):
        task = new_task(owner, f"Task {n}", next_step="Next: " + "step " * 100)
        update_task(owner, task, status="in_progress", work_receipt=receipt(f"s-{n}"))
    for n in range(10):
        state_put(
            owner,
            write_context=wc(owner),
            agent="codex",
            body="# Running summary\n" + f"- item {n} " * 300,
        )
    for model in (Memory, Task, WorkReceipt, StateVersion):
        assert model.objects.filter(project=world.alpha).count() == 10
    _check_every_limit(world.caller("viewer"), django_assert_num_queries, "codex", 10)


# --- 10,000 rows of each kind ---------------------------------------------------------------


def _bulk(project: Project, count: int, text: Callable[[int, int], str]) -> None:
    """count rows of each kind; text(n, length) gives row n's text of that length. Small counts
    get every text at its maximum length; large ones shorter texts (the selector reads only a
    prefix of each, and 10,000 full-length rows would take minutes to write)."""

    def sized(n: int, length: int) -> str:
        return text(n, length if count <= 200 else min(length, 300))

    many = 100 if count <= 200 else 4
    memories = [
        Memory(
            project=project,
            kind="decision" if n % 2 else "note",
            title=sized(n, 200),
            content=sized(n, 16_000),
            rationale=sized(n, 100),
            source="bulk",
            author="bulk",
        )
        for n in range(count)
    ]
    for older, newer in itertools.pairwise(memories):
        newer.supersedes = older  # every id field filled: the widest skeleton
    Memory.objects.bulk_create(memories, batch_size=500)
    tasks = Task.objects.bulk_create(
        (
            Task(
                project=project,
                title=sized(n, 200),
                description=sized(n, 100),
                status=("todo", "in_progress", "blocked")[n % 3],
                next_step=sized(n, 2000),
                blockers=[sized(n, 500)] * 20,
                handoff_note=sized(n, 100),
                repository_ref={
                    "repository": sized(n, 201),
                    "branch": sized(n, 200),
                    "commit": "f" * 64,
                },
                version=2_147_483_647,
                created_by="bulk",
                updated_by="bulk",
            )
            for n in range(count)
        ),
        batch_size=500,
    )
    results = ("passed", "failed", "skipped", "error")
    WorkReceipt.objects.bulk_create(
        (
            WorkReceipt(
                project=project,
                task=tasks[n % len(tasks)],
                session_ref=sized(n, 200 - len(str(n))) + str(n),
                summary=sized(n, 4000),
                tests=[{"name": "t", "result": results[i % 4]} for i in range(many)],
                commits=["f" * 64] * many,
                next_step=sized(n, 100),
                blockers=[],
                task_version=2_147_483_647,
                author="bulk",
            )
            for n in range(count)
        ),
        batch_size=500,
    )
    StateVersion.objects.bulk_create(
        (
            StateVersion(
                project=project,
                agent="a" * 100,
                version=n + 1,
                body="# Running summary\n" + sized(n, 12_000 - 18),
                author="bulk",
            )
            for n in range(count)
        ),
        batch_size=500,
    )


def _plain(n: int, length: int) -> str:
    return (f"row {n} plain words " * (length // 10 + 1))[:length]


def test_ten_thousand_rows_of_each_kind_fit_the_budget_in_constant_queries(
    world: World, django_assert_num_queries: Any
) -> None:
    _bulk(world.alpha, 10_000, _plain)
    for model in (Memory, Task, WorkReceipt, StateVersion):
        assert model.objects.filter(project=world.alpha).count() == 10_000
    viewer = world.caller("viewer")
    _check_every_limit(viewer, django_assert_num_queries, "a" * 100, 10_000)
    counts = as_json(continuity_context(viewer))["counts"]
    assert (counts["memories"], counts["tasks"], counts["open_tasks"], counts["receipts"]) == (
        10_000,
        10_000,
        10_000,
        10_000,
    )


# --- the largest JSON a project can produce -------------------------------------------------

# Each costs the most JSON bytes it can: control characters are written as \u00XX (6 bytes), a
# quote or a backslash as 2, an astral character as 4 (and 1 Python character), a line separator
# as 3; a few spaces so that one_line has something to collapse.
NASTY = '\x01"\\🦄\x1f\u2028é\t\x7f</script>\ud7ff 𝄞\x0b'


def _nasty(n: int, length: int) -> str:
    return (NASTY * (length // len(NASTY) + 1))[:length]


def _fill_identity(world: World) -> None:
    Project.objects.filter(pk=world.alpha.pk).update(name=_nasty(0, 200))
    world.alpha.refresh_from_db()
    ProjectRepository.objects.filter(project=world.alpha).delete()
    for n in range(12):
        repository = Repository.objects.create(
            provider="github",
            owner=_nasty(n, 96) + f"{n:04}",
            name=_nasty(n, 100),
            url="https://example.com/" + _nasty(n, 280),
            default_branch=_nasty(n, 100),
        )
        ProjectRepository.objects.create(project=world.alpha, repository=repository)


def test_the_largest_possible_rows_still_fit_the_budget(
    world: World, django_assert_num_queries: Any
) -> None:
    _fill_identity(world)
    _bulk(world.alpha, 150, _nasty)
    viewer = world.caller("viewer")
    largest = _check_every_limit(viewer, django_assert_num_queries, "a" * 100, 150)
    assert largest > 16_000  # the caps case really was exercised near its budget

    # The budget is met by clipping previews, not by dropping what a session needs.
    context = as_json(continuity_context(viewer))
    assert json.loads(json.dumps(context, ensure_ascii=False)) == context
    assert all(m["preview"].endswith("…") for m in context["memories"])
    assert all(uuid.UUID(t["id"]) and t["version"] == 2_147_483_647 for t in context["tasks"])
    assert all(t["repository_ref"]["commit"] == "f" * 64 for t in context["tasks"])
    assert all(
        r["tests"] == {"passed": 25, "failed": 25, "skipped": 25, "error": 25}
        for r in context["receipts"]
    )
    assert context["state"]["chars"] == 12_000
    assert len(context["repositories"]) == 10


def test_unicode_at_the_budgets_edge_is_never_split(world: World) -> None:
    """Clipping counts JSON bytes per character, so an astral character or an escape is kept
    whole or dropped whole: the result is always valid UTF-8 JSON."""
    owner = world.caller("owner")
    for _ in range(60):
        add_note(owner, "🦄" * 15_999 + "\x01", title="𝄞" * 200)
    for limits, budget in LIMIT_CASES:
        context = as_json(continuity_context(owner, **dict(limits)))
        encoded = json.dumps(context, ensure_ascii=False, separators=(",", ":")).encode()
        assert len(encoded) <= budget
        assert json.loads(encoded.decode("utf-8")) == context
        for memory in context["memories"]:
            assert set(memory["preview"]) <= {"🦄", "…"}


def test_tasks_that_each_wait_on_twenty_others_still_fit_the_budget(
    world: World, django_assert_num_queries: Any
) -> None:
    """Every open task blocked by the most tasks it may be (MAX_DEPENDENCIES, none done): each
    entry shows a few of their ids and their number, in the same queries and bytes."""
    _fill_identity(world)
    _bulk(world.alpha, 150, _nasty)
    tasks = list(Task.objects.filter(project=world.alpha).order_by("created_at", "id"))
    TaskDependency.objects.bulk_create(
        TaskDependency(project=world.alpha, task=task, blocked_by=tasks[(n + k) % len(tasks)])
        for n, task in enumerate(tasks)
        for k in range(1, MAX_DEPENDENCIES + 1)
    )
    viewer = world.caller("viewer")
    _check_every_limit(viewer, django_assert_num_queries, "a" * 100, 150)
    for limit, shown in ((20, 3), (21, 1), (100, 1)):
        tasks_seen = as_json(continuity_context(viewer, task_limit=limit))["tasks"]
        assert all(t["waiting_on_count"] == MAX_DEPENDENCIES for t in tasks_seen)
        assert all(len(t["waiting_on"]) == shown and not t["ready"] for t in tasks_seen)
