"""The audit UI at 1,000,000 events: list-page latency (p50/p95) for the first page, a deep page
and each kind of filter (targets and actors common, rare and absent), and a filtered export's
time to first row, rows per second and peak memory.

Run by hand from the repository root, against PostgreSQL on 127.0.0.1:5432 (a few minutes):

    .venv/bin/python bench/web_audit.py
    .venv/bin/python bench/web_audit.py --events 200000 --requests 20
    .venv/bin/python bench/web_audit.py --keep        # keep the bench database for a rerun

It creates the database `h_ui_bench` (dropped at the end unless --keep), migrates it, makes a
project and its owner through the services, and generates the events with one INSERT ... SELECT
over generate_series (1,000,000 in the project, a tenth as many in a second project, so that
the project filter matters). Requests go through Django's test client in this process (the
whole view, its queries and the template; no HTTP socket), signed in as the project's owner.

The export is the page's own download (/audit/<slug>/export.jsonl, audit.export streaming the
filtered set in chain order, 2,000 rows per query), read through to its last line. The bulk load
turns the chain triggers off for its one INSERT and numbers the rows itself: the events are in
their chains' order but carry no digests, so they would not verify (verification is not timed
here).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import psycopg

REPO = Path(__file__).resolve().parent.parent
DATABASE = "h_ui_bench"
OPERATIONS = ("task_update", "task_get", "memory_add", "memory_search", "continuity_context")
PASSWORD = "bench-password-not-for-production-42"  # noqa: S105
ERRORS = ("stale_version", "forbidden", "validation_error")


def create_database(keep: bool) -> bool:
    """True when the database already holds a bench run (with --keep)."""
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
        exists = db.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone()
        if exists and keep:
            return True
        db.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        db.execute(f'CREATE DATABASE "{DATABASE}"')
    return False


def drop_database() -> None:
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')


def setup_django() -> None:
    os.environ.update(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        DJANGO_SETTINGS_MODULE="heyaira.settings",
        DEBUG="false",
        SECRET_KEY="bench-secret-key-not-for-production-0123456789abcdef",  # noqa: S106
        HEYAIRA_API_KEY_PEPPER="bench-api-key-pepper-not-for-production-0123456789",
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="WARNING",
        DATABASE_STATEMENT_TIMEOUT_MS="120000",
    )
    sys.path.insert(0, str(REPO))
    import django

    django.setup()


def generate(events: int) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from projects.services import project_create

    call_command("migrate", verbosity=0)
    for username in ("olivia", "oscar"):
        get_user_model().objects.create_user(username=username, password=PASSWORD)
    alpha = project_create(slug="alpha", name="Alpha", owner_username="olivia", operator="bench")
    beta = project_create(slug="beta", name="Beta", owner_username="oscar", operator="bench")
    started = time.monotonic()
    for project, count in ((alpha, events), (beta, events // 10)):
        with connection.cursor() as cursor:
            # The chain triggers are off for this bulk load (superuser, this session only): the
            # rows get their positions here, newest last, and placeholder hashes. The events do
            # not verify (no digests); the bench times reads and exports, not verification.
            cursor.execute(
                "SELECT seq FROM audit_auditchainhead WHERE chain = %s", [str(project.pk)]
            )
            (before,) = cursor.fetchone() or (0,)
            cursor.execute("SET session_replication_role = replica")
            # The load is one statement of minutes on a busy machine: no timeout for it.
            cursor.execute("SET statement_timeout = 0")
            cursor.execute(
                """
                INSERT INTO audit_auditevent (id, occurred_at, request_id, actor_type, actor_id,
                    actor_label, user_id, client_id, credential_kind, credential_fingerprint,
                    resource, instance, project_id, operation, target_type, target_id, outcome,
                    error_code, chain, digest, seq, prev_hash, hash)
                SELECT gen_random_uuid(), now() - n * interval '1 second', md5(n::text), 'user',
                    (n %% 50)::text,
                    CASE WHEN n = %s THEN 'agent-once' ELSE 'agent-' || (n %% 50) END, NULL,
                    'client-' || (n %% 7), 'oauth_token', substr(md5((n %% 50)::text), 1, 12), '',
                    'bench', %s, (%s::text[])[1 + n %% 5], 'task',
                    CASE WHEN n = %s THEN 't-once' ELSE 't-' || (n %% 5000) END,
                    CASE WHEN n %% 20 = 0 THEN 'rejected' ELSE 'success' END,
                    CASE WHEN n %% 20 = 0 THEN (%s::text[])[1 + (n / 20) %% 3] ELSE '' END,
                    %s, md5(n::text), %s + %s + 1 - n, md5((n + 1)::text), md5(n::text)
                FROM generate_series(1, %s) AS n
                """,
                [
                    count * 2 // 3,  # one event, two thirds of the way back, by a one-off actor
                    project.pk,
                    list(OPERATIONS),
                    count * 3 // 4,  # and one on a target named nowhere else
                    list(ERRORS),
                    str(project.pk),
                    before,
                    count,
                    count,
                ],
            )
            # The head follows the bulk rows, so that later appends (the pages' own audit rows)
            # chain on after them.
            cursor.execute(
                "UPDATE audit_auditchainhead SET seq = %s, last_hash = md5('1') WHERE chain = %s",
                [before + count, str(project.pk)],
            )
            cursor.execute("SET session_replication_role = DEFAULT")
            cursor.execute("RESET statement_timeout")
    print(f"generated {events + events // 10:,} events in {time.monotonic() - started:.1f} s")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def hour_ago(hours: int) -> str:
    from datetime import UTC, datetime, timedelta

    moment = datetime.now(UTC) - timedelta(hours=hours)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def time_pages(requests: int) -> list[dict[str, Any]]:
    from django.db import connection

    with connection.cursor() as cursor:
        # Fresh planner statistics, as autovacuum would have made them by now.
        cursor.execute("ANALYZE audit_auditevent")
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from audit.models import AuditEvent
    from projects.models import Project
    from web.selectors.audit import encode_cursor

    alpha = Project.objects.get(slug="alpha")
    total = AuditEvent.objects.filter(project_id=alpha.pk).count()
    depth = total // 2
    deep = AuditEvent.objects.filter(project_id=alpha.pk).order_by("-occurred_at", "-id")[depth]
    rare = AuditEvent.objects.filter(project_id=alpha.pk).order_by("occurred_at").first()
    assert rare is not None
    scenarios = {
        "first page": "",
        f"a page {depth:,} events deep": f"?after={encode_cursor(deep)}",
        "operation": "?operation=task_update",
        "outcome + error code": "?outcome=rejected&error_code=forbidden",
        "actor (1 in 50)": "?actor=agent-7",
        "actor id (1 in 50)": "?actor=7",
        "actor (1 event)": "?actor=agent-once",
        "actor (no event)": "?actor=nobody",
        "target (1 in 5,000)": "?target=task:t-42",
        "target id alone (1 in 5,000)": "?target=t-42",
        "target (1 event)": "?target=task:t-once",
        "target (no event)": "?target=task:t-none",
        "request id (1 row)": f"?request_id={rare.request_id}",
        "one hour, a day back": f"?since={hour_ago(25)}&until={hour_ago(24)}",
        "all filters": (
            f"?operation=task_update&outcome=success&actor=agent-3&since={hour_ago(48)}"
        ),
    }
    client = Client()
    client.force_login(alpha.memberships.get().user)
    results = []
    for name, query in scenarios.items():
        url = f"/audit/alpha/{query}"
        client.get(url)  # warm the plan and the caches
        seconds: list[float] = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url)
            seconds.append(time.perf_counter() - started)
            assert response.status_code == 200, (url, response.status_code)
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        results.append(
            {
                "scenario": name,
                "p50_ms": round(1000 * statistics.median(seconds), 1),
                "p95_ms": round(1000 * percentile(seconds, 0.95), 1),
                "queries": len(queries.captured_queries),
            }
        )
    return results


def time_export() -> dict[str, Any]:
    """The export view, streamed to the end: once for time and rows/s, once under tracemalloc
    for the peak memory (tracing slows Python down several times over)."""
    from audit.models import AuditEvent
    from projects.models import Project

    alpha = Project.objects.get(slug="alpha")
    expected = AuditEvent.objects.filter(project_id=alpha.pk, operation="task_update").count()
    rows, size, first, elapsed = stream_export(alpha)
    assert rows == expected, (rows, expected)
    tracemalloc.start()
    stream_export(alpha)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "filter": "operation=task_update",
        "rows": rows,
        "first_row_ms": round(1000 * first, 1),
        "rows_per_second": round(rows / elapsed),
        "megabytes": round(size / 1e6, 1),
        "peak_python_memory_mb": round(peak / 1e6, 1),
    }


def stream_export(project: Any) -> tuple[int, int, float, float]:
    """(rows, bytes, seconds to the first row, seconds in all) of /audit/<slug>/export.jsonl
    filtered to one operation, read through to its last line."""
    from django.test import Client

    client = Client()
    client.force_login(project.memberships.get().user)
    started = time.perf_counter()
    response = client.get(f"/audit/{project.slug}/export.jsonl?operation=task_update")
    assert response.status_code == 200
    lines = size = 0
    first = 0.0
    for chunk in response.streaming_content:  # type: ignore[attr-defined]
        size += len(chunk)
        lines += chunk.count(b"\n")
        if not first and lines > 1:
            first = time.perf_counter() - started
    return lines - 1, size, first, time.perf_counter() - started  # less the header line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--keep", action="store_true", help="keep (and reuse) the database")
    options = parser.parse_args()
    reuse = create_database(options.keep)
    setup_django()
    try:
        if not reuse:
            generate(options.events)
        for row in time_pages(options.requests):
            print(
                f"list {row['scenario']:<28} p50 {row['p50_ms']:>7} ms   "
                f"p95 {row['p95_ms']:>7} ms   {row['queries']} queries"
            )
        export = time_export()
        print(
            f"export {export['filter']}: {export['rows']:,} rows, first row after "
            f"{export['first_row_ms']} ms, {export['rows_per_second']:,} rows/s, "
            f"{export['megabytes']} MB, peak Python memory {export['peak_python_memory_mb']} MB"
        )
    finally:
        from django.db import connections

        connections.close_all()
        if not options.keep:
            drop_database()


if __name__ == "__main__":
    main()
