"""bench/search.py's work inside Django (`manage.py shell`): loading many memories of varied
words fast (bench/search_words.py), and the plan PostgreSQL runs for a search."""

from __future__ import annotations

import random
import time
import uuid
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from bench import search_words
from bench.fixtures import emit
from bench.search_words import MARKED_RARE, SENTENCE_CHARACTERS, SKEW, VOCABULARY, vocabulary
from continuity.models import Memory
from continuity.selectors import memory_search
from identity import authn
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import Project

# The memories' dates spread evenly over this span, newest now: each day, month and year of it
# holds a realistic share of them (the search reads the newest periods first).
SPAN = timedelta(days=3 * 365)


def load(*, slug: str, count: int, characters: int) -> None:
    """`count` memories of about `characters` characters each (varied, at most 16,000) in the
    project, written evenly over the last SPAN, in one INSERT ... SELECT on PostgreSQL,
    executemany on SQLite; emits the time."""
    started = time.monotonic()
    project = Project.objects.get(slug=slug)
    if connection.vendor == "postgresql":
        _load_postgresql(project, count, characters)
    else:
        _load_sqlite(project, count, characters)
    emit({"memories": count, "seconds": round(time.monotonic() - started, 1)})


def _load_postgresql(project: Project, count: int, characters: int) -> None:
    """Memories made of sentences drawn from a pool (bench_sentences, made here from the
    vocabulary): an index lookup per sentence keeps a million memories within minutes."""
    sentences = search_words.sentences(random.Random(3))
    per = max(1, characters // SENTENCE_CHARACTERS)
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute("CREATE TEMPORARY TABLE bench_sentences (n integer PRIMARY KEY, body text)")
        with cursor.cursor.copy("COPY bench_sentences (n, body) FROM STDIN") as copy:
            for n, sentence in enumerate(sentences, start=1):
                copy.write_row((n, sentence))
        cursor.execute("ANALYZE bench_sentences")
        # Built once after the load, as a restore would: faster than growing it row by row.
        cursor.execute("SELECT pg_get_indexdef('memory_search_vector'::regclass)")
        (index,) = cursor.fetchone() or ("",)
        cursor.execute("DROP INDEX memory_search_vector")
        # The sentence picks name the row (g.n), so that they are drawn again for each row.
        cursor.execute(
            """
            INSERT INTO continuity_memory (id, project_id, kind, title, content, rationale,
                source, author, created_at)
            SELECT gen_random_uuid(), %(project)s,
                CASE WHEN n %% 5 < 2 THEN 'decision' ELSE 'note' END,
                left(body, 60), left(body, 16000),
                CASE WHEN n %% 5 < 2 THEN 'because ' || left(body, 80) ELSE '' END,
                '', 'bench', now() - n * %(step)s * interval '1 second'
            FROM (
                SELECT g.n, (CASE WHEN g.n %% 2 = 0 THEN 'ipsum ' ELSE 'dolor ' END)
                    || (CASE WHEN g.n %% %(rare)s = 7 THEN 'kestrel ' ELSE '' END)
                    || array_to_string(ARRAY(
                        SELECT s.body FROM (
                            SELECT (1 + floor(random() * %(pool)s))::integer AS pick
                            FROM generate_series(1, %(per)s + (g.n %% 3) * %(per)s / 4)
                        ) picks JOIN bench_sentences s ON s.n = picks.pick
                    ), ' ') AS body
                FROM generate_series(1, %(count)s) AS g(n)
            ) generated
            """,
            {
                "project": project.pk,
                "rare": MARKED_RARE,
                "pool": len(sentences),
                "per": per,
                "count": count,
                "step": SPAN.total_seconds() / count,
            },
        )
        cursor.execute(index)
        cursor.execute("DROP TABLE bench_sentences")
        cursor.execute("VACUUM (ANALYZE) continuity_memory")


def _load_sqlite(project: Project, count: int, characters: int) -> None:
    words = vocabulary()
    rng = random.Random(5)
    now = timezone.now()
    per = max(4, characters // 8)
    table = Memory._meta.db_table
    insert = (
        f"INSERT INTO {table} (id, project_id, kind, title, content, rationale, source, author,"  # noqa: S608
        " created_at) VALUES (%s, %s, %s, %s, %s, %s, '', 'bench', %s)"
    )
    batch: list[Any] = []
    with connection.cursor() as cursor:
        for n in range(1, count + 1):
            body = ("ipsum " if n % 2 == 0 else "dolor ") + (
                "kestrel " if n % MARKED_RARE == 7 else ""
            )
            drawn = per + (n % 3) * per // 4
            body += " ".join(words[int(VOCABULARY * rng.random() ** SKEW)] for _ in range(drawn))
            decision = n % 5 < 2
            created = now - n * SPAN / count
            batch.append(
                (
                    uuid.uuid4().hex,
                    project.pk.hex,
                    "decision" if decision else "note",
                    body[:60],
                    body[:16000],
                    "because " + body[:80] if decision else "",
                    created.isoformat(sep=" ").replace("+00:00", ""),
                )
            )
            if len(batch) == 5000:
                cursor.executemany(insert, batch)
                batch = []
        if batch:
            cursor.executemany(insert, batch)
        cursor.execute("ANALYZE")


def issue_api_key(*, slug: str, username: str) -> None:
    """A new API key for the project's user (a bench run reusing a loaded database); emits it."""
    project = Project.objects.get(slug=slug)
    user = get_user_model().objects.get(username=username)
    issued = api_key_create(
        operator_caller(project, label="bench"),
        user_id=user.pk,
        label="bench",
        scopes=list(authn.DEFAULT_SCOPES),
    )
    emit({"api_key": issued.secret, "memories": Memory.objects.filter(project=project).count()})


def explain(*, slug: str, query: str) -> None:
    """The plans PostgreSQL ran for one search (auto_explain with ANALYZE and BUFFERS, the
    candidates function's statement included); emits them."""
    project = Project.objects.get(slug=slug)
    plans: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute("LOAD 'auto_explain'")
        for setting in (
            "log_min_duration = 0",
            "log_nested_statements = on",
            "log_analyze = on",
            "log_buffers = on",
            "log_level = notice",
        ):
            cursor.execute(f"SET auto_explain.{setting}")
    raw: Any = connection.connection
    raw.add_notice_handler(lambda notice: plans.append(str(notice.message_primary)))
    memory_search(operator_caller(project, label="bench"), query=query)
    emit({"plans": [plan for plan in plans if "continuity_memory" in plan]})
