"""The audit hash chain's cost: append throughput with the chain against without it, in one run,
and `verify_audit`'s time over 1,000,000 events.

Run by hand from the repository root (PostgreSQL on 127.0.0.1:5432, user postgres):

    .venv/bin/python bench/audit_chain.py
    .venv/bin/python bench/audit_chain.py --appends 2000 --events 200000   # quicker

It creates the database `h_audit_bench` (dropped at the end), migrates it, then:

1. Appends: `--appends` audit rows through the recorder, each in its own transaction as an
   operation writes it (the chain: digest in Python, the trigger's head upsert and link),
   against the same rows with the chain trigger off and no digest (a plain INSERT, as before
   the chain). Rounds of 250 alternate between the two, so a busy machine slows both alike;
   the figures are rows/s and the ratio. Then the same with 8 threads writing one project at
   once (every writer queues on the one head row, held until COMMIT), and 8 threads writing a
   project each (no writer waits for another), against 8 threads without the chain.
   It also counts the SQL statements one audited row costs (CaptureQueriesContext).
2. Verify: `--events` events of one chain made in Python (digest and links, in batches) and
   loaded with COPY (triggers off for the load only), then `verify_chain` (what
   `manage.py verify_audit` runs) walks them; it must find the chain intact.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

REPO = Path(__file__).resolve().parent.parent
DATABASE = "h_audit_bench"
SERVER = "postgres://postgres@127.0.0.1:5432"
ROUND = 250
THREADS = 8


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=5000)
    parser.add_argument("--events", type=int, default=1_000_000)
    options = parser.parse_args()
    _create_database()
    try:
        _setup_django()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        _appends(options.appends)
        _verify(options.events)
    finally:
        from django.db import connections

        connections.close_all()
        _drop_database()
    return 0


def _create_database() -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{DATABASE}"')


def _drop_database() -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')


def _setup_django() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="heyaira.settings",
        DATABASE_URL=f"{SERVER}/{DATABASE}",
        DEBUG="true",
        DATABASE_POOL_SIZE="0",
        # One COPY loads the million events: no statement timeout for the bench's session.
        DATABASE_STATEMENT_TIMEOUT_MS="0",
    )
    import django

    django.setup()


# --- appends ----------------------------------------------------------------------------------


def _fields(project: uuid.UUID, n: int) -> dict[str, Any]:
    from django.utils import timezone

    return {
        "occurred_at": timezone.now(),
        "request_id": f"bench-{n}",
        "actor_type": "user",
        "actor_id": "42",
        "actor_label": "bench",
        "user_id": 42,
        "credential_kind": "oauth_token",
        "credential_fingerprint": "0123456789ab",
        "resource": "http://127.0.0.1:8000/mcp",
        "instance": "bench",
        "project_id": project,
        "operation": "memory_add",
        "target_type": "memory",
        "target_id": str(uuid.uuid4()),
        "outcome": "success",
    }


def _chained(project: uuid.UUID, n: int) -> None:
    from django.db import transaction

    from audit.recorder import _event  # the recorder's own row builder, digest included

    with transaction.atomic():
        _event(_fields(project, n)).save(force_insert=True)


def _unchained(project: uuid.UUID, n: int) -> None:
    from django.db import transaction

    from audit.models import AuditEvent

    with transaction.atomic():
        AuditEvent(**_fields(project, n)).save(force_insert=True)


def _chain_trigger(enabled: bool) -> None:
    from django.db import connection

    verb = "ENABLE" if enabled else "DISABLE"
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE audit_auditevent {verb} TRIGGER audit_chain_append")


def _appends(count: int) -> None:
    chained_project, plain_project = uuid.uuid4(), uuid.uuid4()
    timings = {"chain": 0.0, "plain": 0.0}
    done = {"chain": 0, "plain": 0}
    n = 0
    while done["chain"] < count:
        for kind, write, project in (
            ("chain", _chained, chained_project),
            ("plain", _unchained, plain_project),
        ):
            _chain_trigger(kind == "chain")
            started = time.perf_counter()
            for _ in range(ROUND):
                write(project, n)
                n += 1
            timings[kind] += time.perf_counter() - started
            done[kind] += ROUND
    _chain_trigger(True)
    chain_rate, plain_rate = done["chain"] / timings["chain"], done["plain"] / timings["plain"]
    print(f"appends, one writer, {done['chain']} rows each, rounds of {ROUND} alternating:")
    print(f"  with the chain    {chain_rate:8.0f} rows/s")
    print(f"  without the chain {plain_rate:8.0f} rows/s")
    print(f"  ratio (with/without) {chain_rate / plain_rate:.2f}")
    _threaded(count)
    _statements()


def _threaded(count: int) -> None:
    per_thread = max(1, count // THREADS)
    for spread in (False, True):
        rates = {}
        for kind, write in (("chain", _chained), ("plain", _unchained)):
            _chain_trigger(kind == "chain")
            # One project: every chained writer queues on its one head row; one project per
            # thread: no writer waits for another.
            projects = [uuid.uuid4() for _ in range(THREADS if spread else 1)]
            elapsed = _run_threads(write, projects, per_thread)
            rates[kind] = THREADS * per_thread / elapsed
        _chain_trigger(True)
        where = f"{THREADS} projects, one each" if spread else "one project"
        print(f"appends, {THREADS} threads on {where}, {THREADS * per_thread} rows each way:")
        print(f"  with the chain    {rates['chain']:8.0f} rows/s")
        print(f"  without the chain {rates['plain']:8.0f} rows/s")
        print(f"  ratio (with/without) {rates['chain'] / rates['plain']:.2f}")


def _run_threads(
    write: Callable[[uuid.UUID, int], None], projects: list[uuid.UUID], each: int
) -> float:
    from django.db import connection

    start = threading.Barrier(THREADS + 1)
    failures: list[BaseException] = []

    def work(offset: int) -> None:
        project = projects[offset // each % len(projects)]
        start.wait()
        try:
            for n in range(each):
                write(project, offset + n)
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i * each,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    start.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise failures[0]
    return elapsed


def _statements() -> None:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from audit.models import Outcome
    from audit.recorder import SecurityContext, record_security_event

    reset_queries()  # the log holds 9,000 at most: past that it cannot count
    with CaptureQueriesContext(connection) as queries:
        record_security_event("bench", Outcome.REJECTED, SecurityContext(request_id="count"))
    print(f"SQL statements for one audited row (outside a transaction): {len(queries)}")


# --- verify -----------------------------------------------------------------------------------


def _verify(count: int) -> None:
    from audit import chain
    from audit.verify import verify_chain

    project = uuid.uuid4()
    name = chain.chain_of(project)
    started = time.perf_counter()
    last, _when = _load(project, name, count)
    loaded = time.perf_counter() - started
    print(f"verify: {count} events made and loaded with COPY in {loaded:.1f} s")
    started = time.perf_counter()
    report = verify_chain(name)
    elapsed = time.perf_counter() - started
    assert report.ok, report.problems[:3]
    assert (report.verified_seq, report.last_hash) == (count, last)
    print(f"  verify_chain (verify_audit) over {count} events: {elapsed:.1f} s")
    print(f"  {count / elapsed:,.0f} events/s, intact: {report.ok}")


def _load(project: uuid.UUID, name: str, count: int) -> tuple[str, dt.datetime]:
    from django.db import connection, transaction

    from audit import chain

    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    last, before_last, when = "", "", base
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
        raw = cursor.cursor  # psycopg's own cursor, for COPY
        columns = ", ".join((*chain.FIELDS, *chain.CHAIN_FIELDS))
        with raw.copy(f"COPY audit_auditevent ({columns}) FROM STDIN") as copy:
            for seq in range(1, count + 1):
                when = base + dt.timedelta(microseconds=seq * 1000)
                fields = _fields(project, seq) | {"occurred_at": when, "chain": name}
                fields |= {"id": uuid.uuid4(), "client_id": "", "error_code": ""}
                digest = chain.digest(fields)
                link = chain.chain_hash(last, seq, digest)
                own = [fields[column] for column in chain.FIELDS]
                copy.write_row([*own, seq, last, digest, link])
                before_last, last = last, link
        cursor.execute(
            "INSERT INTO audit_auditchainhead (chain, seq, prev_hash, last_hash, last_time) "
            "VALUES (%s, %s, %s, %s, %s)",
            [name, count, before_last, last, when],
        )
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")
    return last, when


if __name__ == "__main__":
    sys.exit(main())
