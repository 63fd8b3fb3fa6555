"""memory_search: full-text search on PostgreSQL (with its GIN index), a plain every-word match
on SQLite; this project's memories only, best matches first, bounded."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from continuity.models import Memory
from continuity.selectors import memory_search
from tests.continuity.helpers import add_decision, add_note, as_json, last_audit, rejected
from tests.factories import World

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL full-text search"
)
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite fallback")


def _ids(world: World, query: str, **arguments: Any) -> list[str]:
    result = as_json(memory_search(world.caller("viewer"), query=query, **arguments))
    assert result["query"] == query
    return [item["id"] for item in result["results"]]


def test_it_finds_words_in_the_title_the_content_and_the_rationale(world: World) -> None:
    owner = world.caller("owner")
    by_title = add_note(owner, "body text", title="Kestrel rollout")
    by_content = add_note(owner, "the kestrel cache is warm")
    by_rationale = add_decision(owner, "Cache it.", rationale="kestrel is slow cold")
    add_note(owner, "unrelated")
    assert sorted(_ids(world, "kestrel")) == sorted(
        [by_title["id"], by_content["id"], by_rationale["id"]]
    )
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome) == ("memory_search", "success")


def test_every_word_of_the_query_must_match(world: World) -> None:
    owner = world.caller("owner")
    both = add_note(owner, "kestrel falcon")
    add_note(owner, "kestrel only")
    add_note(owner, "falcon only")
    assert _ids(world, "kestrel falcon") == [both["id"]]


def test_it_filters_by_kind(world: World) -> None:
    owner = world.caller("owner")
    note = add_note(owner, "kestrel note")
    decision = add_decision(owner, "kestrel decision")
    assert _ids(world, "kestrel", kind="note") == [note["id"]]
    assert _ids(world, "kestrel", kind="decision") == [decision["id"]]


def test_it_returns_at_most_the_limit(world: World) -> None:
    owner = world.caller("owner")
    for n in range(12):
        add_note(owner, f"kestrel {n}")
    assert len(_ids(world, "kestrel")) == 10
    assert len(_ids(world, "kestrel", limit=3)) == 3
    assert len(_ids(world, "kestrel", limit=50)) == 12


def test_results_carry_a_short_preview_not_the_whole_memory(world: World) -> None:
    owner = world.caller("owner")
    added = add_decision(owner, "kestrel " + "détail " * 2000, title="T")
    (item,) = as_json(memory_search(world.caller("viewer"), query="kestrel"))["results"]
    assert set(item) == {"id", "kind", "title", "preview", "supersedes", "created_at"}
    assert (item["id"], item["kind"], item["title"]) == (added["id"], "decision", "T")
    assert len(item["preview"].encode()) <= 280
    assert item["preview"].startswith("kestrel détail")


def test_it_finds_nothing_for_words_nobody_wrote(world: World) -> None:
    add_note(world.caller("owner"), "kestrel")
    assert _ids(world, "osprey") == []


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "a & b | !c", "-", "OR", "'; DROP TABLE x; --", "\\", "%_%", "🦅 ñ", "the"],
)
def test_any_text_is_a_query_never_an_error(world: World, query: str) -> None:
    add_note(world.caller("owner"), "kestrel 100% _done_")
    assert isinstance(_ids(world, query), list)


def test_like_wildcards_are_matched_literally(world: World) -> None:
    add_note(world.caller("owner"), "plain words")
    assert _ids(world, "%") == []
    assert _ids(world, "_") == []


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "q" * 201}, "query"),
        ({"query": "a\x00b"}, "query"),
        ({"query": "kestrel", "kind": "poem"}, "kind"),
        ({"query": "kestrel", "limit": 0}, "limit"),
        ({"query": "kestrel", "limit": 51}, "limit"),
        ({"query": "kestrel", "limit": 2**80}, "limit"),
        ({"query": 5}, "query"),
    ],
)
def test_it_rejects_bad_arguments(world: World, arguments: dict[str, object], field: str) -> None:
    error = rejected("validation_error", memory_search, world.caller("viewer"), **arguments)
    assert list(error.details["fields"]) == [field]


@postgres_only
def test_postgresql_matches_word_forms_and_ranks_the_best_first(world: World) -> None:
    owner = world.caller("owner")
    weak = add_note(owner, "We discussed migrations once, among many other things to do later.")
    strong = add_note(owner, "Migrating: migration plan for migrations", title="Migrations")
    assert _ids(world, "migration") == [strong["id"], weak["id"]]


@postgres_only
def test_postgresql_understands_web_search_syntax(world: World) -> None:
    owner = world.caller("owner")
    cache = add_note(owner, "kestrel cache")
    add_note(owner, "kestrel queue")
    assert _ids(world, "kestrel -queue") == [cache["id"]]
    assert sorted(_ids(world, "cache or queue")) == sorted(
        item["id"] for item in as_json(memory_search(owner, query="kestrel"))["results"]
    )


@sqlite_only
def test_sqlite_matches_substrings_case_insensitively(world: World) -> None:
    owner = world.caller("owner")
    hit = add_note(owner, "The KESTRELS nest here")
    assert _ids(world, "kestrel") == [hit["id"]]


@postgres_only
def test_postgresql_search_can_use_the_gin_index(world: World) -> None:
    """The search's own SQL, planned with sequential scans off, reaches memory_search_vector:
    the expression the query uses is the indexed one."""
    owner = world.caller("owner")
    Memory.objects.bulk_create(
        Memory(project=world.alpha, kind="note", content=f"filler note {n}", author="bulk")
        for n in range(2000)
    )
    add_note(owner, "kestrel")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE continuity_memory")
    with CaptureQueriesContext(connection) as captured:
        assert len(_ids(world, "kestrel")) == 1
    (search_sql,) = [q["sql"] for q in captured.captured_queries if "to_tsvector" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + search_sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "memory_search_vector" in plan, plan
