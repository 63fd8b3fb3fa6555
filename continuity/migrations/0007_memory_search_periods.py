"""Memory search reads the newest memories first, at a cost bounded for common words
(docs/scaling.md, "Memory search").

A GIN index answers a query with the whole set of its matches before any LIMIT applies: a word
in every memory cost as much as the project's size. So each memory's vector also names the
periods it was written in (UTC day, month and year, each with its project), and the candidates
function looks up the words together with the newest periods first, widening until it has
enough: GIN reads the rarest entries of each lookup and skips through the others, so each step
costs the smaller of the period's size and the words' frequency.

PostgreSQL only: SQLite's FTS5 already reads matches newest first (by rowid) and stops.

Re-creating the generated column rewrites continuity_memory once under its lock, computing
every memory's vector again (as 0005 did).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

# The periods a memory was written in, as terms no text can produce (the parser never makes a
# lexeme with a space): 'day <project> 20261202', 'month <project> 202612', 'year <project>
# 2026', in UTC. Immutable (extract over a timestamp without time zone), so a generated column
# can use it; the candidates function names the periods of a search with it too.
PERIOD_TERMS = """
    CREATE FUNCTION continuity_memory_period_terms(project uuid, written timestamptz)
    RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY[
        'day ' || project::text || ' ' || (
            extract(year FROM written AT TIME ZONE 'UTC') * 10000
            + extract(month FROM written AT TIME ZONE 'UTC') * 100
            + extract(day FROM written AT TIME ZONE 'UTC')
        )::integer::text,
        'month ' || project::text || ' ' || (
            extract(year FROM written AT TIME ZONE 'UTC') * 100
            + extract(month FROM written AT TIME ZONE 'UTC')
        )::integer::text,
        'year ' || project::text || ' '
            || extract(year FROM written AT TIME ZONE 'UTC')::integer::text
    ]
"""

SEARCH_VECTOR = """
    ALTER TABLE continuity_memory ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (
        to_tsvector(
            'english'::regconfig,
            COALESCE(title, '') || ' ' || COALESCE(content, '') || ' ' || COALESCE(rationale, '')
        )
        || array_to_tsvector(
            ARRAY['project ' || project_id::text, 'kind ' || kind::text]
            || continuity_memory_period_terms(project_id, created_at)
        )
    ) STORED
"""

# When the project's newest memory was written: the first entry of memory_project_newest (plain
# index scans are on again here only; the table is never scanned either).
NEWEST = """
    CREATE FUNCTION continuity_memory_newest(project uuid) RETURNS timestamptz
    LANGUAGE sql STABLE
    SET enable_seqscan = off
    SET enable_indexscan = on
    AS $$
        SELECT m.created_at FROM continuity_memory m
        WHERE m.project_id = project ORDER BY m.created_at DESC LIMIT 1
    $$
"""

# At most `wanted` memories of `project` matching `lookup`, newest periods first: the two
# newest days of the project (its newest memory's and the one before), then its two newest
# months, two newest years, and the whole project; the first of these that holds `wanted`
# matches answers (each holds the ones before it). Each step reads the GIN index only: with
# sequential and plain index scans off inside the function, whatever the planner estimates for
# the words, the index the lookup can use is its only way. In UTC, as the periods are: a month
# before the newest memory is then the previous UTC month. `lookup` never needs a recheck (no phrase, no
# weight), so each row read is a candidate.
CANDIDATES = """
    CREATE FUNCTION continuity_memory_search_candidates(
        project uuid, lookup tsquery, wanted integer
    )
    RETURNS TABLE (id uuid, created_at timestamptz, search_vector tsvector)
    LANGUAGE plpgsql STABLE
    SET enable_seqscan = off
    SET enable_indexscan = off
    SET TimeZone = 'UTC'
    AS $$
    #variable_conflict use_column
    DECLARE
        newest timestamptz;
        latest text[];
        before_day text[];
        before_month text[];
        before_year text[];
        periods tsquery[];
        period tsquery;
        ids uuid[];
    BEGIN
        IF querytree(lookup) = 'T' THEN
            RETURN;
        END IF;
        newest := continuity_memory_newest(project);
        IF newest IS NULL THEN
            RETURN;
        END IF;
        latest := continuity_memory_period_terms(project, newest);
        before_day := continuity_memory_period_terms(project, newest - interval '1 day');
        before_month := continuity_memory_period_terms(project, newest - interval '1 month');
        before_year := continuity_memory_period_terms(project, newest - interval '1 year');
        periods := ARRAY[
            tsquery(quote_literal(latest[1])) || tsquery(quote_literal(before_day[1])),
            tsquery(quote_literal(latest[2])) || tsquery(quote_literal(before_month[2])),
            tsquery(quote_literal(latest[3])) || tsquery(quote_literal(before_year[3])),
            tsquery(quote_literal('project ' || project::text))
        ];
        FOREACH period IN ARRAY periods LOOP
            ids := ARRAY(
                SELECT m.id FROM continuity_memory m
                WHERE m.search_vector @@ (period && lookup)
                LIMIT wanted
            );
            EXIT WHEN cardinality(ids) >= wanted;
        END LOOP;
        -- Read again by primary key: gathering the vectors into arrays would decompress each.
        RETURN QUERY SELECT m.id, m.created_at, m.search_vector FROM continuity_memory m
        WHERE m.id = ANY (ids);
    END
    $$
"""

POSTGRES_FORWARDS = (
    "DROP FUNCTION continuity_memory_search_candidates(tsquery, integer)",
    "DROP INDEX memory_search_vector",
    "ALTER TABLE continuity_memory DROP COLUMN search_vector",
    PERIOD_TERMS,
    SEARCH_VECTOR,
    "CREATE INDEX memory_search_vector ON continuity_memory USING gin (search_vector)",
    NEWEST,
    CANDIDATES,
)

# 0005's column, index and function again.
POSTGRES_BACKWARDS = (
    "DROP FUNCTION continuity_memory_search_candidates(uuid, tsquery, integer)",
    "DROP FUNCTION continuity_memory_newest(uuid)",
    "DROP INDEX memory_search_vector",
    "ALTER TABLE continuity_memory DROP COLUMN search_vector",
    "DROP FUNCTION continuity_memory_period_terms(uuid, timestamptz)",
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


def _run(statements: tuple[str, ...]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("continuity", "0006_task_leases"),
    ]

    operations = [
        migrations.RunPython(_run(POSTGRES_FORWARDS), _run(POSTGRES_BACKWARDS)),
    ]
