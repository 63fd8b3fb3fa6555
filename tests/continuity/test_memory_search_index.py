"""memory_search reads its full-text index and a bounded set of matches, never the table: on
PostgreSQL the GIN index memory_search_vector (the executed plan, and the table's own scan
counters), on SQLite the FTS5 table (its query plan). One statement per search. The newest
matches are the candidates: a common word never reaches older memories.

The data is realistic for the planner: thousands of memories whose words are common, rare or
never found together, with fresh statistics (ANALYZE), more rows than the candidate bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from continuity.models import Memory
from continuity.search_terms import parse
from continuity.selectors import memory_search
from continuity.selectors.fulltext import SEARCH_CANDIDATES
from tests.factories import World

ROWS = 3_000
# The candidates function's lookups at most: the newest two days, months, years, the project.
PERIOD_LOOKUPS = 4
postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL")
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite")

# query -> how many of alpha's memories it finds (at most the limit, 50)
QUERIES = {
    "lorem": 50,  # in every memory
    "kestrel": 1,  # in one
    "osprey": 0,  # in none
    "ipsum dolor": 0,  # each in half the memories, never together
    "lorem -lorem": 0,
    "ipsum -dolor": 50,
    "lorem -ipsum -dolor": 0,
    '"ipsum lorem"': 0,  # both everywhere together, never in this order
    '"lorem ipsum"': 50,
    "-lorem": 0,
    'lorem & !ipsum | "(dolor:*)" \' ; --': 0,
}


def _load(world: World) -> None:
    """ROWS memories in alpha ("lorem ipsum ..." or "lorem dolor ...", one with "kestrel"), and
    300 in beta that all say "kestrel"; then fresh statistics, as autovacuum keeps them."""
    memories = [
        Memory(
            project=world.alpha,
            kind="note",
            content=f"lorem {'ipsum' if n % 2 else 'dolor'} sit amet {n}"
            + (" kestrel" if n == 7 else ""),
            author="bulk",
        )
        for n in range(ROWS)
    ]
    memories += [
        Memory(project=world.beta, kind="note", content=f"kestrel {n}", author="bulk")
        for n in range(300)
    ]
    Memory.objects.bulk_create(memories, batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _ids(world: World, query: str) -> list[str]:
    found = memory_search(world.caller("viewer"), query=query, limit=50).results
    return [str(item.id) for item in found]


def _search_statements(world: World, query: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        _ids(world, query)
    return [q["sql"] for q in captured.captured_queries if "continuity_memory" in q["sql"]]


@pytest.mark.django_db
@pytest.mark.parametrize("query", list(QUERIES))
def test_each_search_is_one_statement_with_the_expected_answer(world: World, query: str):
    _load(world)
    assert len(_ids(world, query)) == QUERIES[query]
    # Nothing to look up (exclusions only): answered without a statement.
    assert len(_search_statements(world, query)) == (0 if parse(query).empty else 1)


@contextmanager
def _table_reads() -> Iterator[dict[str, int]]:
    """How this transaction read continuity_memory meanwhile: sequential scans, rows they read,
    and rows fetched through indexes (PostgreSQL's per-transaction statistics)."""
    counters = (
        "pg_stat_get_xact_numscans",
        "pg_stat_get_xact_tuples_returned",
        "pg_stat_get_xact_tuples_fetched",
    )

    def read() -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT "
                + ", ".join(f"{name}('continuity_memory'::regclass)" for name in counters)
                + ", pg_stat_get_xact_numscans('memory_search_vector'::regclass)"
            )
            row = cursor.fetchone()
        assert row is not None
        return [int(value) for value in row]

    before = read()
    found: dict[str, int] = {}
    yield found
    after = read()
    names = ("seq_scans", "seq_rows", "fetched", "gin_scans")
    found.update({name: a - b for name, a, b in zip(names, after, before, strict=True)})


@postgres_only
@pytest.mark.django_db
@pytest.mark.parametrize("query", list(QUERIES))
def test_postgresql_never_scans_the_table_whatever_the_words(world: World, query: str):
    """Common words, a rare one, none, common words never together, negations and phrases
    that the index cannot decide: no sequential scan, the GIN index used (once per period
    looked up), and at most the candidates of each lookup, the candidates again (by primary
    key, with their vectors) and the page fetched, of 3,000 memories. A word in every memory
    is answered by the first lookup."""
    _load(world)
    with _table_reads() as reads:
        _ids(world, query)
    assert reads["seq_scans"] == 0, reads
    assert reads["fetched"] <= (PERIOD_LOOKUPS + 1) * SEARCH_CANDIDATES + 50, reads
    if parse(query).empty:
        assert reads["gin_scans"] == 0, reads
    else:
        assert 1 <= reads["gin_scans"] <= PERIOD_LOOKUPS, reads
    if query == "lorem":
        assert reads["gin_scans"] == 1, reads
        assert reads["fetched"] <= 2 * SEARCH_CANDIDATES + 50, reads


@postgres_only
@pytest.mark.django_db
def test_postgresql_reads_a_common_word_through_the_gin_index(world: World):
    """The plan the search runs, as PostgreSQL executed it (auto_explain, nested statements
    included), with the statistics of realistic data and the server's own settings."""
    _load(world)
    with _executed_plans() as plans:
        assert len(_ids(world, "lorem")) == 50
    text = "\n".join(plans)
    assert "Bitmap Index Scan on memory_search_vector" in text, text
    assert "Seq Scan on continuity_memory" not in text, text


def _written(memories: list[Memory], when: datetime) -> None:
    # created_at is set on insert (auto_now_add); an update sets it (and the vector follows).
    Memory.objects.filter(pk__in=[memory.pk for memory in memories]).update(created_at=when)


@pytest.mark.django_db
def test_a_common_word_is_answered_from_the_newest_memories(world: World):
    """More than the candidates match today: memories of two years ago that rank higher (the
    word three times) are never read; a word only they hold is still found."""
    old = Memory.objects.bulk_create(
        Memory(
            project=world.alpha, kind="note", content=f"lorem lorem lorem osprey {n}", author="bulk"
        )
        for n in range(20)
    )
    _written(old, datetime.now(UTC) - timedelta(days=730))
    new = Memory.objects.bulk_create(
        Memory(project=world.alpha, kind="note", content=f"lorem ipsum {n}", author="bulk")
        for n in range(SEARCH_CANDIDATES + 10)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    found = set(_ids(world, "lorem"))
    assert len(found) == 50
    assert found <= {str(memory.pk) for memory in new}
    assert set(_ids(world, "osprey")) == {str(memory.pk) for memory in old}
    assert len(_ids(world, "lorem osprey")) == 20


@postgres_only
@pytest.mark.django_db
def test_postgresql_names_the_utc_periods_a_memory_was_written_in(world: World):
    """Day, month and year in UTC, whatever the session's time zone: 00:30 on 1 January 2026
    in Paris is 31 December 2025 in UTC."""
    memory = Memory.objects.create(project=world.alpha, kind="note", content="lorem", author="bulk")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL TIME ZONE 'Europe/Paris'")
    _written([memory], datetime(2026, 1, 1, 0, 30, tzinfo=UTC) - timedelta(hours=1))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(search_vector) FROM continuity_memory WHERE id = %s",
            [memory.pk],
        )
        row = cursor.fetchone()
    assert row is not None
    project = world.alpha.pk
    assert {
        f"day {project} 20251231",
        f"month {project} 202512",
        f"year {project} 2025",
    } <= set(row[0])


@contextmanager
def _executed_plans() -> Iterator[list[str]]:
    plans: list[str] = []
    raw: Any = connection.connection

    def collect(notice: Any) -> None:
        plans.append(str(notice.message_primary))

    with connection.cursor() as cursor:
        # Superuser only (the tests' database role): prints each statement's plan as a notice.
        cursor.execute("LOAD 'auto_explain'")
        cursor.execute("SET LOCAL auto_explain.log_min_duration = 0")
        cursor.execute("SET LOCAL auto_explain.log_nested_statements = on")
        cursor.execute("SET LOCAL auto_explain.log_level = notice")
    raw.add_notice_handler(collect)
    try:
        yield plans
    finally:
        raw.remove_notice_handler(collect)
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL auto_explain.log_min_duration = -1")


@sqlite_only
@pytest.mark.django_db
@pytest.mark.parametrize("query", list(QUERIES))
def test_sqlite_reads_the_fts5_index_and_memories_by_rowid_only(world: World, query: str):
    _load(world)
    statements = _search_statements(world, query)
    if not statements:
        return  # nothing to look up: no statement at all
    (sql,) = statements
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql)
        plan = [str(row[-1]) for row in cursor.fetchall()]
    assert any("VIRTUAL TABLE INDEX" in step for step in plan), plan
    scans = [step for step in plan if step.startswith("SCAN") and "VIRTUAL TABLE" not in step]
    assert all("candidates" in step for step in scans), plan


@sqlite_only
@pytest.mark.django_db
def test_sqlite_keeps_the_fts5_triggers_after_every_migration():
    """A later migration that rebuilds continuity_memory on SQLite (an AlterField does) drops
    its triggers with the old table, and the index would silently stop following the memories:
    such a migration must create them again (as 0005 does) and rebuild the index."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s",
            ["continuity_memory"],
        )
        triggers = {name for (name,) in cursor.fetchall()}
    assert {
        "continuity_memory_fts_insert",
        "continuity_memory_fts_delete",
        "continuity_memory_fts_update",
    } <= triggers


@sqlite_only
@pytest.mark.django_db
def test_sqlite_index_follows_deleted_memories(world: World):
    _load(world)
    Memory.objects.filter(project=world.alpha, content__contains="kestrel").delete()
    assert _ids(world, "kestrel") == []
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO continuity_memory_fts (continuity_memory_fts) VALUES ('integrity-check')"
        )
