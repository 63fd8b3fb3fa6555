"""Full-text search that reads an index, never the table (docs/scaling.md, "Memory search").

PostgreSQL: a stored tsvector column, generated from the title, content and rationale (the
ORM never selects it: only memory_search's SQL names it), with the project and the kind as
terms of their own, so that one GIN index looks up the tenant and the words together; and a
function that reads candidates through that index only. It replaces the expression index,
with which each query recomputed the vector of every row it ranked.

SQLite: an FTS5 table over continuity_memory (external content: it indexes the text, the table
keeps it), kept by triggers, with the project and the kind as indexed columns so that a query
names its tenant inside the full-text match.

Adding the generated column rewrites continuity_memory once, under its lock: about 11 ms per
memory of 16,000 characters on a busy 2-core machine (docs/scaling.md, "Memory search").
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

import continuity.migration_operations

# The vector holds the words of the title, content and rationale, and two terms no text can
# produce (the parser never makes a lexeme with a space): the project and the kind. A search
# looks them up in the same index as its words, so the GIN index alone finds the candidates.
POSTGRES_FORWARDS = (
    """
    ALTER TABLE continuity_memory ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (
        to_tsvector(
            'english'::regconfig,
            COALESCE(title, '') || ' ' || COALESCE(content, '') || ' ' || COALESCE(rationale, '')
        )
        || array_to_tsvector(ARRAY['project ' || project_id::text, 'kind ' || kind::text])
    ) STORED
    """,
    "CREATE INDEX memory_search_vector ON continuity_memory USING gin (search_vector)",
    # At most `wanted` memories matching `lookup`, found through the GIN index only: with
    # sequential and plain index scans off inside the function, the index the lookup can use is
    # the only way the planner has, whatever it estimates for the words (a "common" word that
    # matches nothing with another would otherwise send it reading the whole table).
    # `lookup` never needs a recheck (no phrase, no weight), so each row read is a candidate.
    """
    CREATE FUNCTION continuity_memory_search_candidates(lookup tsquery, wanted integer)
    RETURNS TABLE (id uuid, created_at timestamptz, search_vector tsvector)
    LANGUAGE sql STABLE
    SET enable_seqscan = off
    SET enable_indexscan = off
    AS $$
        SELECT m.id, m.created_at, m.search_vector FROM continuity_memory m
        WHERE m.search_vector @@ lookup AND querytree(lookup) <> 'T'
        LIMIT wanted
    $$
    """,
)
POSTGRES_BACKWARDS = (
    "DROP FUNCTION IF EXISTS continuity_memory_search_candidates(tsquery, integer)",
    "DROP INDEX IF EXISTS memory_search_vector",
    "ALTER TABLE continuity_memory DROP COLUMN IF EXISTS search_vector",
)

# Porter stemming over Unicode words, accents kept: the closest FTS5 has to PostgreSQL's
# `english` configuration (which also folds word forms together).
SQLITE_FORWARDS = (
    """
    CREATE VIRTUAL TABLE continuity_memory_fts USING fts5(
        project_id, kind, title, content, rationale,
        content='continuity_memory', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 0'
    )
    """,
    """
    CREATE TRIGGER continuity_memory_fts_insert AFTER INSERT ON continuity_memory BEGIN
        INSERT INTO continuity_memory_fts (rowid, project_id, kind, title, content, rationale)
        VALUES (new.rowid, new.project_id, new.kind, new.title, new.content, new.rationale);
    END
    """,
    """
    CREATE TRIGGER continuity_memory_fts_delete AFTER DELETE ON continuity_memory BEGIN
        INSERT INTO continuity_memory_fts
            (continuity_memory_fts, rowid, project_id, kind, title, content, rationale)
        VALUES ('delete', old.rowid, old.project_id, old.kind, old.title, old.content,
            old.rationale);
    END
    """,
    # Memories are immutable; an operator's edit in the database is indexed all the same.
    """
    CREATE TRIGGER continuity_memory_fts_update AFTER UPDATE ON continuity_memory BEGIN
        INSERT INTO continuity_memory_fts
            (continuity_memory_fts, rowid, project_id, kind, title, content, rationale)
        VALUES ('delete', old.rowid, old.project_id, old.kind, old.title, old.content,
            old.rationale);
        INSERT INTO continuity_memory_fts (rowid, project_id, kind, title, content, rationale)
        VALUES (new.rowid, new.project_id, new.kind, new.title, new.content, new.rationale);
    END
    """,
    # The memories written before this migration.
    "INSERT INTO continuity_memory_fts (continuity_memory_fts) VALUES ('rebuild')",
)
SQLITE_BACKWARDS = (
    "DROP TRIGGER IF EXISTS continuity_memory_fts_update",
    "DROP TRIGGER IF EXISTS continuity_memory_fts_delete",
    "DROP TRIGGER IF EXISTS continuity_memory_fts_insert",
    "DROP TABLE IF EXISTS continuity_memory_fts",
)


def _run(statements: dict[str, tuple[str, ...]]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        for statement in statements.get(schema_editor.connection.vendor, ()):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("continuity", "0004_dependency_indexes_lead_with_project"),
    ]

    operations = [
        continuity.migration_operations.PostgresOnlyRemoveIndex(
            model_name="memory",
            name="memory_search_vector",
        ),
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARDS, "sqlite": SQLITE_FORWARDS}),
            _run({"postgresql": POSTGRES_BACKWARDS, "sqlite": SQLITE_BACKWARDS}),
        ),
    ]

