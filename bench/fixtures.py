"""The bench's work inside Django, run through `manage.py shell` against the bench database.

`bench/mcp_latency.py` calls each function in a fresh `manage.py shell -c` and reads the JSON
it prints after RESULT_MARKER. Small data (people, tasks, receipts, a running summary) goes
through the services so that it looks like real use, audit rows included; the memories are
bulk-loaded (COPY on PostgreSQL, executemany on SQLite), with no audit rows.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, models
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.recorder import fingerprint
from continuity import selectors, services
from continuity.models import Memory
from continuity.outputs import TaskUpdateOut
from identity import authn
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import ApiKey, Project
from projects.services import project_create, repository_bind

RESULT_MARKER = "@@BENCH@@"

WORDS = (
    "cache",
    "migration",
    "schema",
    "index",
    "query",
    "latency",
    "retry",
    "queue",
    "worker",
    "deploy",
    "rollback",
    "token",
    "session",
    "handoff",
    "receipt",
    "branch",
    "commit",
    "review",
    "release",
    "staging",
    "production",
    "incident",
    "budget",
    "audit",
    "tenant",
    "project",
    "memory",
    "decision",
    "note",
    "task",
    "claim",
    "version",
    "conflict",
    "idempotency",
    "key",
    "postgres",
    "sqlite",
    "uvicorn",
    "gunicorn",
    "proxy",
    "header",
    "origin",
    "scope",
    "refresh",
    "consent",
    "client",
    "server",
    "timeout",
    "backoff",
    "throttle",
    "webhook",
    "payload",
    "validation",
    "error",
    "fixture",
    "benchmark",
    "agent",
    "summary",
    "context",
    "recovery",
    "protocol",
    "transport",
    "stream",
    "json",
    "bytes",
    "preview",
    "limit",
    "cursor",
    "page",
)
SOURCES = (
    "https://github.com/acme/app/pull/{n}",
    "https://github.com/acme/app/issues/{n}",
    "commit {hex}",
    "user in session",
    "design review {n}",
)


def emit(result: Any) -> None:
    print(RESULT_MARKER + json.dumps(result))


def setup(*, username: str, slug: str, tasks: int = 30, receipts: int = 10) -> None:
    """A user owning a project with a bound repository, tasks (two thirds open), receipts, a
    running summary and an API key; emits the key, one open task and the write_context."""
    user = get_user_model().objects.create_user(username=username, password=None)
    project = project_create(
        slug=slug, name=slug.title(), owner_username=username, operator="bench"
    )
    operator = operator_caller(project, label="bench")
    context = operator.write_context.as_dict()
    repository_bind(
        operator, provider="github", owner="acme", name="app", url="https://github.com/acme/app"
    )
    rng = random.Random(7)
    created = [
        services.task_create.call(
            operator,
            {
                "write_context": context,
                "title": _sentence(rng, 4, 10)[:200],
                "description": _paragraphs(rng, 200, 1500),
                "next_step": _sentence(rng, 6, 20),
                "idempotency_key": f"bench-task-{n}",
            },
        )
        for n in range(tasks)
    ]
    for task in created[: tasks // 3]:
        claimed = _task_update(operator, context, task.id, task.version, {"status": "in_progress"})
        _task_update(operator, context, task.id, claimed.task.version, {"status": "done"})
    for n, task in enumerate(created[tasks // 3 : tasks // 3 + receipts]):
        receipt = {
            "session_ref": f"bench-session-{n}",
            "summary": _sentence(rng, 20, 60),
            "tests": [{"name": "make test", "result": "passed"}],
            "commits": [f"{rng.getrandbits(160):040x}"],
        }
        _task_update(operator, context, task.id, task.version, {"work_receipt": receipt})
    services.state_put.call(
        operator,
        {
            "write_context": context,
            "agent": "bench-agent",
            "body": "# Running summary\n\n" + _paragraphs(rng, 800, 3000),
        },
    )
    issued = api_key_create(
        operator, user_id=user.pk, label="bench", scopes=list(authn.DEFAULT_SCOPES)
    )
    target = created[-1]
    emit({"api_key": issued.secret, "task_id": str(target.id), "task_version": target.version})


def _task_update(
    caller: Any, context: dict[str, str], task_id: Any, version: int, changes: dict[str, Any]
) -> TaskUpdateOut:
    return services.task_update.call(
        caller,
        {"write_context": context, "task_id": task_id, "expected_version": version, **changes},
    )


def load_memories(*, slug: str, target: int, seed: int = 1) -> None:
    """Top the project up to `target` memories, fast; emits the count and the seconds taken."""
    started = time.monotonic()
    project = Project.objects.get(slug=slug)
    have = Memory.objects.filter(project=project).count()
    missing = max(0, target - have)
    rows = memory_rows(project, missing, random.Random(seed + have))
    fields = [_column(name) for name in MEMORY_COLUMNS]
    prepared = (
        [
            field.get_db_prep_value(value, connection)
            for field, value in zip(fields, row, strict=True)
        ]
        for row in rows
    )
    table = Memory._meta.db_table
    names = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for values in prepared:
                    copy.write_row(values)
            # What autovacuum does after a load this size (PostgreSQL 13 and later vacuum tables
            # that only grow, too): statistics, and the visibility map that lets counts read the
            # index alone. The shell runs in autocommit, so VACUUM may run here.
            cursor.execute(f"VACUUM (ANALYZE) {table}")
        else:
            marks = ", ".join(["%s"] * len(fields))
            # Names from the model's metadata, values as parameters.
            insert = f"INSERT INTO {table} ({names}) VALUES ({marks})"  # noqa: S608
            cursor.executemany(insert, list(prepared))
    count = Memory.objects.filter(project=project).count()
    emit({"memories": count, "added": missing, "seconds": round(time.monotonic() - started, 1)})


MEMORY_COLUMNS = (
    "id",
    "project",
    "kind",
    "title",
    "content",
    "rationale",
    "source",
    "author",
    "created_at",
)


def _column(name: str) -> models.Field[Any, Any]:
    field = Memory._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field


def memory_rows(project: Project, count: int, rng: random.Random) -> Iterator[list[Any]]:
    """Decisions and notes of varied, realistic length, one every five minutes or so."""
    now = timezone.now()
    for n in range(count):
        decision = rng.random() < 0.4
        # Most memories are a few sentences; some are long design notes.
        length = int(min(16_000, rng.lognormvariate(6.0, 0.9)))
        yield [
            uuid.UUID(int=rng.getrandbits(128), version=4),
            project.pk,
            "decision" if decision else "note",
            _sentence(rng, 3, 12)[:200],
            _paragraphs(rng, max(20, length), max(20, length)),
            _sentence(rng, 10, 40) if decision else "",
            rng.choice(SOURCES).format(n=rng.randrange(1, 5000), hex=f"{rng.getrandbits(40):010x}")
            if decision
            else "",
            rng.choice(("bench", "olivia", "codex", "claude")),
            now - timedelta(seconds=(count - n) * 300 + rng.randrange(300)),
        ]


def context_queries(*, api_key: str) -> None:
    """Queries of one continuity_context request (authentication and the operation) and of the
    operation alone, counted inside Django like the tests' assertNumQueries."""
    with CaptureQueriesContext(connection) as whole:
        caller = authn.authenticate(f"Bearer {api_key}", resource="mcp", request_id="bench")
        with CaptureQueriesContext(connection) as operation:
            result = selectors.continuity_context.call(caller, {})
    body = json.dumps(result.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
    emit(
        {
            "request_queries": len(whole.captured_queries),
            "operation_queries": len(operation.captured_queries),
            "bytes": len(body.encode()),
            "memories_listed": len(result.memories),
        }
    )


def floor_fixture(*, slug: str) -> None:
    """What bench/floor.py writes into its rows: the project, the bench key's ids and labels,
    and the write_context (as HeyAira's own rows would carry them)."""
    project = Project.objects.get(slug=slug)
    key = ApiKey.objects.select_related("user").get(project=project, label="bench")
    emit(
        {
            "project_id": str(project.pk),
            "user_id": key.user_id,
            "api_key_id": str(key.pk),
            "actor_label": f"{key.label} ({key.user.get_username()})",
            "fingerprint": fingerprint(key.prefix),
            "write_context": operator_caller(project, label="bench").write_context.as_dict()
            | {"resource": settings.HEYAIRA_MCP_RESOURCE},
        }
    )


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def _paragraphs(rng: random.Random, low: int, high: int) -> str:
    target = rng.randint(low, high)
    parts: list[str] = []
    size = 0
    while size < target:
        sentence = _sentence(rng, 5, 18)
        parts.append(sentence)
        size += len(sentence) + 1
        if rng.random() < 0.15:
            parts.append("\n\n")
    return " ".join(parts)[:target]
