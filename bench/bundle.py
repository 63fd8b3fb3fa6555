"""The project bundle at scale: export and import of a project holding N memories and N audit
events, with rows/s and each process's peak memory, at two sizes (default 10,000 and 1,000,000).

Run by hand from the repository root (PostgreSQL on 127.0.0.1:5432, user postgres):

    .venv/bin/python bench/bundle.py                          # 10k and 1M
    .venv/bin/python bench/bundle.py --sizes 10000,100000     # quicker
    .venv/bin/python bench/bundle.py --prefix heyaira_mine    # databases named heyaira_mine_*

It makes an empty migrated database with the user `bench` as a template, then for each size:
a source database from it, loaded by the database and COPY (N memories of 200 to 1,800
characters made by generate_series, N audit events chained as the recorder chains them); the
export into a file, in a process of its own; a target database from the template; the import of
that file there, in a process of its own. Peak memory is each process's maximum resident size
(wait4), Django and all: flat means the 1M figure is within 2x of the 10k one. Goal: export
>= 50,000 rows/s. The databases are dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

REPO = Path(__file__).resolve().parent.parent
SERVER = "postgres://postgres@127.0.0.1:5432"
SLUG = "bench"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,1000000", help="memories (and audit events)")
    parser.add_argument(
        "--prefix", default="h_bundle_bench", help="the names of the bench's databases start so"
    )
    parser.add_argument(
        "--export-only", action="store_true", help="measure the export alone (no import)"
    )
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        return _child(*options.child)
    sizes = [int(size) for size in options.sizes.split(",")]
    made: list[str] = []
    template = f"{options.prefix}_template"
    try:
        _create(template, made)
        _manage(template, "migrate", "--verbosity", "0")
        _manage(template, "shell", "-c", _USER)
        steps = ("export",) if options.export_only else ("export", "import")
        results = [_round(options.prefix, template, size, made, steps) for size in sizes]
    finally:
        for name in reversed(made):
            _drop(name)
    _summary(results, steps)
    return 0


_USER = (
    "from django.contrib.auth import get_user_model; "
    "get_user_model().objects.create_user(username='bench', email='bench@example.com')"
)


def _round(
    prefix: str, template: str, size: int, made: list[str], steps: tuple[str, ...]
) -> dict[str, Any]:
    source, target = f"{prefix}_{size}", f"{prefix}_{size}_target"
    _create(source, made, template=template)
    started = time.perf_counter()
    _run(source, "load", str(size))
    print(f"size {size:,}: loaded in {time.perf_counter() - started:.1f} s", flush=True)
    bundle = Path(f"/tmp/{prefix}_{size}.jsonl")  # noqa: S108 (the bench's own file)
    try:
        export = _run(source, "export", str(bundle))
        _drop(source)
        made.remove(source)
        result: dict[str, Any] = {"size": size, "bytes": bundle.stat().st_size, "export": export}
        if "import" in steps:
            _create(target, made, template=template)
            result["import"] = _run(target, "import", str(bundle))
            _drop(target)
            made.remove(target)
    finally:
        bundle.unlink(missing_ok=True)
    for step in steps:
        figures = result[step]
        print(
            f"  {step}: {figures['rows']:,} rows in {figures['seconds']:.1f} s = "
            f"{figures['rows'] / figures['seconds']:,.0f} rows/s "
            f"({figures['rows'] / figures['cpu_s']:,.0f} rows per CPU second of the process), "
            f"peak {figures['peak_mb']:.0f} MB",
            flush=True,
        )
    return result


def _summary(results: list[dict[str, Any]], steps: tuple[str, ...]) -> None:
    first, last = results[0], results[-1]
    for step in steps:
        ratio = last[step]["peak_mb"] / first[step]["peak_mb"]
        print(
            f"{step} peak memory {first['size']:,} -> {last['size']:,}: "
            f"{first[step]['peak_mb']:.0f} MB -> {last[step]['peak_mb']:.0f} MB ({ratio:.2f}x)"
        )
    print(json.dumps(results))


# --- processes ------------------------------------------------------------------------------


def _run(database: str, *args: str) -> dict[str, Any]:
    """This script as a child against one database; its figures and its peak memory."""
    env = {**os.environ, **_environment(database)}
    command = [sys.executable, __file__, "--child", *args]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, cwd=REPO)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise RuntimeError(f"{args[0]} failed ({status})")
    figures: dict[str, Any] = json.loads(output.decode().strip().splitlines()[-1])
    figures["peak_mb"] = usage.ru_maxrss / 1024  # kilobytes on Linux
    # On a shared machine the wall clock says how busy it is; the process's own CPU time says
    # what the work costs this side of the database.
    figures["cpu_s"] = usage.ru_utime + usage.ru_stime
    return figures


def _environment(database: str) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "heyaira.settings",
        "DATABASE_URL": f"{SERVER}/{database}",
        "DATABASE_POOL_SIZE": "0",
        "DATABASE_STATEMENT_TIMEOUT_MS": "0",
        # DEBUG off: with it on, Django keeps the text of every query (each bulk INSERT a
        # thousand rows long), which a memory figure would count.
        "DEBUG": "false",
        "SECRET_KEY": "bench-secret-key-not-for-production-0123456789abcdefgh",
        "HEYAIRA_API_KEY_PEPPER": "bench-pepper-not-for-production-0123456789abcdefghijk",
        "HEYAIRA_INSTANCE": "bench",
    }


def _manage(database: str, *args: str) -> None:
    env = {**os.environ, **_environment(database)}
    command = [sys.executable, str(REPO / "manage.py"), *args]
    subprocess.run(command, env=env, check=True, cwd=REPO, stdout=subprocess.DEVNULL)


def _create(name: str, made: list[str], template: str | None = None) -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    made.append(name)


def _drop(name: str) -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- the child: one step against one database -----------------------------------------------


def _child(step: str, argument: str) -> int:
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    figures = {"load": _load, "export": _export, "import": _import}[step](argument)
    print(json.dumps(figures))
    return 0


def _load(size: str) -> dict[str, Any]:
    from bench.audit_chain import _load as load_chain
    from projects.services import project_create

    project = project_create(slug=SLUG, name="Bench", owner_username="bench", operator="bench")
    _load_memories(str(project.pk), int(size))
    # The chain continues from project_create's events: the loader writes a whole chain, so it
    # gets a project of its own id space; its events are what the bundle carries for that chain.
    _move_chain_head(str(project.pk))
    load_chain(project.pk, str(project.pk), int(size))
    return {"loaded": int(size)}


# N memories made by the database: 40% decisions, contents of 200 to 1,800 characters (about
# 1,000 on average), one every five minutes. bench.fixtures.load_memories writes more varied
# text, in Python, at a twentieth of the speed: a million took minutes before the bench began.
_MEMORIES = """
INSERT INTO continuity_memory
    (id, project_id, kind, title, content, rationale, source, author, created_at)
SELECT md5('memory ' || i)::uuid, %(project)s,
    CASE WHEN i %% 5 < 2 THEN 'decision' ELSE 'note' END,
    'Memory ' || i || ': ' || md5('title ' || i),
    left(repeat('The ' || md5('content ' || i) || ' choice keeps the queue short. ', 40),
         200 + abs(hashtext('length ' || i)) %% 1600),
    CASE WHEN i %% 5 < 2 THEN 'Because ' || md5('rationale ' || i) ELSE '' END,
    CASE WHEN i %% 5 < 2 THEN 'https://example.com/pull/' || i ELSE '' END,
    (ARRAY['bench', 'olivia', 'codex', 'claude'])[1 + i %% 4],
    timestamptz '2025-01-01 00:00:00+00' + i * interval '300 seconds'
        + (i %% 997) * interval '1 microsecond'
FROM generate_series(1, %(count)s) AS i
"""


_SEARCH_INDEX = "memory_search_vector"


def _load_memories(project: str, count: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        # The full-text index is built once after the load, not grown a row at a time (that
        # took most of a million memories' load). The import grows it as it comes, as any does.
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [_SEARCH_INDEX])
        (definition,) = cursor.fetchone()
        cursor.execute(f"DROP INDEX {_SEARCH_INDEX}")
        cursor.execute(_MEMORIES, {"project": project, "count": count})
        cursor.execute(definition)
        # What autovacuum does after a load this size: statistics and the visibility map.
        cursor.execute("VACUUM (ANALYZE) continuity_memory")


def _move_chain_head(chain: str) -> None:
    """The bulk loader writes positions 1..N and the head itself: the project's own first
    events (project_create) make way for it (triggers lifted, as the loader does)."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
        cursor.execute("ALTER TABLE audit_auditchainhead DISABLE TRIGGER USER")
        cursor.execute("DELETE FROM audit_auditevent WHERE chain = %s", [chain])
        cursor.execute("DELETE FROM audit_auditchainhead WHERE chain = %s", [chain])
        cursor.execute("ALTER TABLE audit_auditchainhead ENABLE TRIGGER USER")
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")
        cursor.execute("ANALYZE audit_auditevent")


def _export(path: str) -> dict[str, Any]:
    from continuity.bundle.export import bundle_lines
    from projects.models import Project

    project = Project.objects.get(slug=SLUG)
    started = time.perf_counter()
    lines = 0
    with open(path, "wb") as out:
        for line in bundle_lines(project):
            out.write(line)
            lines += 1
    return {"rows": lines - 2, "seconds": time.perf_counter() - started}


def _import(path: str) -> dict[str, Any]:
    from continuity.bundle.load import import_bundle

    started = time.perf_counter()
    with open(path, "rb") as bundle:
        report = import_bundle(bundle, operator="bench")
    return {"rows": sum(report.counts.values()), "seconds": time.perf_counter() - started}


if __name__ == "__main__":
    sys.exit(main())
