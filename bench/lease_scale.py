"""task_claim_next and task_heartbeat at 1,000 and 100,000 tasks (10% leased, 1% expired): the
latency (p50, p95) and the SQL statements of each call, which must not grow with the project.

Run through bench/claim_queue.py --leases (PostgreSQL, a bench database created and dropped).
Each size is a project of its own: its tasks are written in bulk (the bench measures reads of
a large table, not how it was filled), then ANALYZEd. Three phases per size, each call through
the service with its Operation wrapper and audit row, no HTTP:
- takeovers: task_claim_next while leases have expired (each call takes the longest-expired);
- claims: task_claim_next of ready tasks, once no lease has expired;
- heartbeats: task_heartbeat by the holders of live leases.
It fails (exit status 1) unless each p50 at the large size is within --flat (1.2x) of the small
size's, and the statement counts are equal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from bench.mcp_latency import percentile

SIZES = (1_000, 100_000)
CALLS = 50
TAKEOVERS = 10  # 1% of 1,000 tasks


def _fill(project: Any, size: int, holder: str) -> None:
    from django.db import connection
    from django.utils import timezone

    from continuity.models import Task, TaskStatus

    now = timezone.now()
    rows = []
    for i in range(size):
        task = Task(project=project, title=f"t{i}", description="d", created_by="bench")
        task.updated_by = "bench"
        if i % 100 == 0:  # 1%: a lease that expired (the oldest expired longest ago)
            task.status = TaskStatus.IN_PROGRESS
            expires = now - timedelta(seconds=600 - i * 600 / size)
            task.lease_actor, task.lease_session_ref = "bench-dead", f"dead-{i}"
            task.lease_seconds, task.lease_expires_at = 900, expires
        elif i % 10 == 0:  # 9% more: live leases (10% leased in all)
            task.status = TaskStatus.IN_PROGRESS
            task.lease_actor, task.lease_session_ref = holder, f"live-{i}"
            task.lease_seconds, task.lease_expires_at = 3600, now + timedelta(hours=1)
        rows.append(task)
    Task.objects.bulk_create(rows, batch_size=5_000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE continuity_task")


def _timed(calls: list[Callable[[], Any]]) -> tuple[list[float], int]:
    """Each call's seconds, and the most statements one of them sent."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    seconds, most = [], 0
    for call in calls:
        with CaptureQueriesContext(connection) as sent:
            started = time.perf_counter()
            call()
            seconds.append(time.perf_counter() - started)
        most = max(most, len(sent.captured_queries))
    return seconds, most


def _phases(size: int) -> dict[str, tuple[list[float], int]]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from continuity.models import Task, TaskStatus
    from continuity.services import task_claim_next, task_heartbeat
    from projects.services import project_create
    from tests.factories import token_caller

    users = get_user_model().objects
    owner = users.create_user(username=f"owner-{size}", password=None)
    project = project_create(
        slug=f"leases-{size}", name=f"Leases {size}", owner_username=owner.username, operator="b"
    )
    caller = token_caller(owner, project)
    context = caller.write_context.as_dict()
    _fill(project, size, caller.actor.label)

    def claim() -> Any:
        return task_claim_next(caller, write_context=context, session_ref="bench-claimer")

    takeovers = _timed([claim] * TAKEOVERS)
    # No lease has expired any more: the claims that follow take ready tasks.
    Task.objects.filter(project=project, lease_expires_at__lte=timezone.now()).update(
        lease_expires_at=timezone.now() + timedelta(hours=1)
    )
    claims = _timed([claim] * CALLS)
    live = list(
        Task.objects.filter(
            project=project, status=TaskStatus.IN_PROGRESS, lease_session_ref__startswith="live-"
        ).values_list("pk", "lease_session_ref")[:CALLS]
    )

    def beat(task_id: Any, session_ref: str) -> Callable[[], Any]:
        return lambda: task_heartbeat(
            caller, write_context=context, task_id=task_id, session_ref=session_ref
        )

    beats = _timed([beat(pk, ref) for pk, ref in live])
    return {
        "task_claim_next (takeover)": takeovers,
        "task_claim_next": claims,
        "task_heartbeat": beats,
    }


def run_leases(flat: float) -> int:
    results = {size: _phases(size) for size in SIZES}
    small, large = SIZES
    print(f"{'operation':<28} {'tasks':>8} {'p50 ms':>8} {'p95 ms':>8} {'statements':>10}")
    problems = []
    for name in results[small]:
        for size in SIZES:
            seconds, statements = results[size][name]
            print(
                f"{name:<28} {size:>8,} {percentile(seconds, 50) * 1000:>8.2f} "
                f"{percentile(seconds, 95) * 1000:>8.2f} {statements:>10}"
            )
        ratio = percentile(results[large][name][0], 50) / percentile(results[small][name][0], 50)
        print(f"{name:<28} p50 {large:,} / {small:,}: {ratio:.2f}x")
        if ratio > flat:
            problems.append(f"{name}: p50 grew {ratio:.2f}x (more than {flat}x)")
        if results[large][name][1] != results[small][name][1]:
            problems.append(f"{name}: the statement count grew with the tasks")
    for problem in problems:
        print(f"FAILED: {problem}")
    if not problems:
        print(f"flat: every p50 within {flat}x, statement counts equal")
    return 1 if problems else 0
