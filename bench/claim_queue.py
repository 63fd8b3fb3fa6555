"""Throughput of task_claim_next: claimers in real threads empty a queue of ready tasks.

Run by hand from the repository root (not by `make test`):

    .venv/bin/python bench/claim_queue.py                        # PostgreSQL on 127.0.0.1:5432
    .venv/bin/python bench/claim_queue.py --claimers 16 --tasks 2000 --blocked 200

With --leases it measures task_claim_next and task_heartbeat at 1,000 and 100,000 tasks, 10% of
them leased and 1% expired, instead (bench/lease_scale.py):

    .venv/bin/python bench/claim_queue.py --leases

It creates a bench database (PostgreSQL: `heyaira_bench_claims`, dropped at the end), migrates
it, and through the services makes a project, `--tasks` ready tasks and `--blocked` tasks each
blocked by an open one (never ready, so every claim passes over them). Then `--claimers` threads,
one database connection each, call task_claim_next (the service with its Operation wrapper and
audit row, no HTTP) until each one is answered {"task": null}. It prints claims per second and
the latency of a claim (p50, p95, max), and fails (exit status 1) unless every ready task was
claimed exactly once and no blocked one was. The whole run is bounded by --time-limit.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.mcp_latency import bench_database, percentile, server_environment


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--postgres",
        default="postgres://postgres@127.0.0.1:5432",
        help="PostgreSQL server URL, without a database name",
    )
    parser.add_argument("--db-name", default="heyaira_bench_claims", help="created, then dropped")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument("--claimers", type=int, default=32, help="threads (at most 64)")
    parser.add_argument("--tasks", type=int, default=1000, help="ready tasks")
    parser.add_argument("--blocked", type=int, default=100, help="tasks that are never ready")
    parser.add_argument("--time-limit", type=float, default=300, help="seconds for the claims")
    parser.add_argument(
        "--leases",
        action="store_true",
        help="instead: claims and heartbeats at 1k and 100k tasks (bench/lease_scale.py)",
    )
    parser.add_argument("--flat", type=float, default=1.2, help="--leases: largest p50 ratio")
    args = parser.parse_args(argv)
    args.database = "postgres"
    if not 1 <= args.claimers <= 64 or args.tasks < 1 or args.blocked < 0:
        parser.error("--claimers 1..64, --tasks at least 1, --blocked at least 0")
    return args


def _setup(args: argparse.Namespace) -> tuple[Any, set[str], set[str]]:
    """The project's contributor caller factory, the ready task ids and the blocked ones."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from continuity import services
    from core.access import Role
    from projects.callers import operator_caller
    from projects.services import membership_add, project_create
    from tests.factories import token_caller

    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    owner = users.create_user(username="bench-owner", password=None)
    claimer = users.create_user(username="bench-claimer", password=None)
    project = project_create(
        slug="claims", name="Claims", owner_username=owner.username, operator="bench"
    )
    membership_add(operator_caller(project), user_id=claimer.pk, role=Role.CONTRIBUTOR)
    operator = operator_caller(project, label="bench")
    context = operator.write_context.as_dict()

    def create(title: str, **extra: Any) -> str:
        made = services.task_create.call(
            operator, {"write_context": context, "title": title, "description": "d", **extra}
        )
        return str(made.id)

    holder = create("holder")
    services.task_update.call(
        operator,
        {"write_context": context, "task_id": holder, "expected_version": 1, "status": "blocked"},
    )
    blocked = {create(f"blocked {n}", blocked_by=[holder]) for n in range(args.blocked)}
    ready = {create(f"ready {n}") for n in range(args.tasks)}
    return (lambda: token_caller(claimer, project)), ready, blocked


def _claim_until_empty(
    new_caller: Any,
    deadline: float,
    claimed: list[str],
    latencies: list[float],
    errors: list[str],
) -> None:
    from django.db import connection

    from continuity.services import task_claim_next

    try:
        while time.monotonic() < deadline:
            caller = new_caller()
            started = time.perf_counter()
            result = task_claim_next.call(caller, {"write_context": caller.write_context.as_dict()})
            latencies.append(time.perf_counter() - started)
            if result.task is None:
                return
            claimed.append(str(result.task.id))
    except Exception as error:  # reported, and it fails the run
        errors.append(f"{type(error).__name__}: {error}")
    finally:
        connection.close()


def run(args: argparse.Namespace) -> int:
    import django

    django.setup()
    new_caller, ready, blocked = _setup(args)
    claimed: list[str] = []
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.monotonic() + args.time_limit
    work = (new_caller, deadline, claimed, latencies, errors)
    threads = [threading.Thread(target=_claim_until_empty, args=work) for _ in range(args.claimers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started

    counts = Counter(claimed)
    print(f"claimers {args.claimers}, ready tasks {args.tasks}, never ready {args.blocked}")
    print(f"claims {len(claimed)} in {elapsed:.2f} s: {len(claimed) / elapsed:.0f} claims/s")
    print(
        "claim latency (every call, the empty answers included): "
        f"p50 {percentile(latencies, 50) * 1000:.1f} ms, "
        f"p95 {percentile(latencies, 95) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
    )
    problems = [f"a claimer failed: {error}" for error in errors]
    if set(counts) != ready:
        problems.append(f"{len(ready - set(counts))} ready tasks left unclaimed")
    if any(n > 1 for n in counts.values()):
        problems.append(f"{sum(n > 1 for n in counts.values())} tasks claimed twice or more")
    if set(counts) & blocked:
        problems.append("a task that was never ready was claimed")
    for problem in problems:
        print(f"FAILED: {problem}")
    if not problems:
        print("every ready task claimed exactly once; no blocked task claimed")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    with bench_database(args) as database_url:
        os.environ.update(server_environment(database_url, 8000))
        # One connection per claimer thread, held for its life, as the concurrency tests do.
        os.environ["DATABASE_POOL_SIZE"] = "0"
        os.environ.setdefault("DATABASE_CONN_MAX_AGE", "60")
        if args.leases:
            import django

            django.setup()
            from django.core.management import call_command

            from bench.lease_scale import run_leases

            call_command("migrate", verbosity=0)
            return run_leases(args.flat)
        return run(args)


if __name__ == "__main__":
    sys.exit(main())
