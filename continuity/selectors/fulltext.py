"""memory_search's one SQL statement, on PostgreSQL (tsvector and GIN) and on SQLite (FTS5).

Both read the full-text index for at most SEARCH_CANDIDATES matching memories of the project,
the newest first, rank those, and fetch the best `limit` rows: what a search costs depends on
that bound, not on how many memories the project holds or how many match. When more match,
the best of the newest candidates are returned (SQLite reads matches by rowid, newest first;
PostgreSQL looks the words up with the project's newest days, then months, then years, in
table order within each: migration 0007).

The terms come from continuity.search_terms, as parameters: no text is ever spliced into SQL
or into a full-text query's syntax.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection
from django.utils.dateparse import parse_datetime

from continuity.search_terms import SearchTerms, Term

Params = list[str | int | uuid.UUID]

# Enough to rank well, few enough that ranking them is cheap (docs/scaling.md measures it).
SEARCH_CANDIDATES = 200
PREVIEW_SOURCE_CHARACTERS = 600
RANKED_TERMS = 16


@dataclass(frozen=True)
class Found:
    id: uuid.UUID
    kind: str
    title: str
    content_start: str
    supersedes_id: uuid.UUID | None
    created_at: datetime


def search(project_id: uuid.UUID, terms: SearchTerms, kind: str | None, limit: int) -> list[Found]:
    if terms.empty:
        return []
    if connection.vendor == "postgresql":
        sql, params = _postgresql(project_id, terms, kind, limit)
    else:
        sql, params = _sqlite(project_id, terms, kind, limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [_found(*row) for row in cursor.fetchall()]


def _found(
    pk: object, kind: str, title: str, start: str, supersedes: object, created: object
) -> Found:
    return Found(
        id=_uuid(pk),
        kind=kind,
        title=title,
        content_start=start,
        supersedes_id=None if supersedes is None else _uuid(supersedes),
        created_at=created if isinstance(created, datetime) else _datetime(str(created)),
    )


def _uuid(value: object) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _datetime(value: str) -> datetime:
    # SQLite keeps created_at as UTC text (USE_TZ), without an offset.
    parsed = parse_datetime(value)
    assert parsed is not None, value
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# --- PostgreSQL ---------------------------------------------------------------------------

_POSTGRESQL = """
WITH best AS (
    SELECT id, created_at, ts_rank(search_vector, {ranked}) AS rank
    FROM continuity_memory_search_candidates(%s, {scope}{lookup}, %s)
    {exact}
    ORDER BY rank DESC, created_at DESC, id DESC
    LIMIT %s
)
SELECT m.id, m.kind, m.title, m.content_start, m.supersedes_id, m.created_at
FROM best CROSS JOIN LATERAL (
    SELECT m.id, m.kind, m.title, left(m.content, %s) AS content_start, m.supersedes_id,
        m.created_at
    FROM continuity_memory m WHERE m.id = best.id AND m.project_id = %s
    OFFSET 0
) m
ORDER BY best.rank DESC, best.created_at DESC, best.id DESC
"""


# The page is fetched row by row by primary key (OFFSET 0 keeps the lateral subquery a
# parameterized lookup): joined, a generic plan of a small table could hash it with a scan.


def _postgresql(
    project_id: uuid.UUID, terms: SearchTerms, kind: str | None, limit: int
) -> tuple[str, Params]:
    """`lookup` is what the GIN index answers exactly, with no row to recheck: phrases become
    their words (the index knows no word order) and excluded phrases are left out. `scope`
    names the kind by its term in the vector (migration 0005); the candidates function names
    the project and its newest periods (migration 0007). `exact` is the query itself, checked
    on the candidates only. `ranked` is what ranks them."""
    lookup_sql, lookup_params = _tsquery(terms, exact=False)
    # Without phrases the lookup is the query: each candidate matches, and checking it again
    # would only decompress its vector once more.
    phrases = any(term.phrase for alternative in terms.alternatives for term in alternative)
    exact_sql, exact_params = _tsquery(terms, exact=True) if phrases else ("", [])
    ranked_sql, ranked_params = _ranked(terms)
    scope = [f"kind {kind}"] if kind else []
    sql = _POSTGRESQL.format(
        ranked=ranked_sql,
        exact=f"WHERE search_vector @@ {exact_sql}" if phrases else "",
        scope="tsquery(quote_literal(%s)) && " if kind else "",
        lookup=lookup_sql,
    )
    params: Params = [*ranked_params, project_id, *scope, *lookup_params, SEARCH_CANDIDATES]
    params += [*exact_params, limit, PREVIEW_SOURCE_CHARACTERS, project_id]
    return sql, params


def _tsquery(terms: SearchTerms, *, exact: bool) -> tuple[str, Params]:
    alternatives: list[str] = []
    params: Params = []
    for alternative in terms.alternatives:
        parts: list[str] = []
        for term in alternative:
            if term.excluded and term.phrase and not exact:
                continue
            parts.append(_tsquery_term(term, exact=exact))
            params.append(term.source)
        alternatives.append("(" + " && ".join(parts) + ")")
    return "(" + " || ".join(alternatives) + ")", params


def _ranked(terms: SearchTerms) -> tuple[str, Params]:
    """The wanted terms as alternatives: ts_rank then weighs each word's occurrences by itself
    (for one word, exactly as the query would). Ranked as an AND, it would weigh every pair of
    occurrences of every pair of words: quadratic, seconds for a long query over long
    memories. At most RANKED_TERMS terms count."""
    wanted = [term for alternative in terms.alternatives for term in alternative]
    wanted = [term for term in wanted if not term.excluded][:RANKED_TERMS]
    sql = " || ".join(["plainto_tsquery('english'::regconfig, %s)"] * len(wanted))
    return f"({sql})", [term.source for term in wanted]


def _tsquery_term(term: Term, *, exact: bool) -> str:
    function = "phraseto_tsquery" if term.phrase and exact else "plainto_tsquery"
    call = f"{function}('english'::regconfig, %s)"
    return f"(!!{call})" if term.excluded else call


# --- SQLite -------------------------------------------------------------------------------

_SQLITE = """
WITH candidates AS MATERIALIZED (
    SELECT rowid, bm25(continuity_memory_fts) AS rank FROM continuity_memory_fts
    WHERE continuity_memory_fts MATCH %s
    ORDER BY rowid DESC
    LIMIT %s
)
SELECT m.id, m.kind, m.title, substr(m.content, 1, %s), m.supersedes_id, m.created_at
FROM candidates JOIN continuity_memory m ON m.rowid = candidates.rowid
WHERE m.project_id = %s
ORDER BY candidates.rank, m.created_at DESC, m.id DESC
LIMIT %s
"""


def _sqlite(
    project_id: uuid.UUID, terms: SearchTerms, kind: str | None, limit: int
) -> tuple[str, Params]:
    """The project (and kind) are terms of the FTS5 query, matched in their own columns, so
    the index intersects them with the words. bm25's lower is better."""
    scope = f'project_id : "{project_id.hex}"' + (f' AND kind : "{kind}"' if kind else "")
    match = f"{scope} AND ({fts5_query(terms)})"
    params: Params = [match, SEARCH_CANDIDATES, PREVIEW_SOURCE_CHARACTERS, project_id.hex, limit]
    return _SQLITE, params


def fts5_query(terms: SearchTerms) -> str:
    """The terms in FTS5's query syntax: every word a quoted string (so no character of it is
    syntax), phrases as one string, exclusions with NOT (FTS5's NOT is binary: each
    alternative has a word to look up, which comes first)."""
    alternatives = []
    for alternative in terms.alternatives:
        wanted = [_fts5_term(term) for term in alternative if not term.excluded]
        unwanted = [_fts5_term(term) for term in alternative if term.excluded]
        query = " AND ".join(wanted)
        if unwanted:
            query = f"({query}) NOT ({' OR '.join(unwanted)})"
        alternatives.append(f"({query})")
    return " OR ".join(alternatives)


def _fts5_term(term: Term) -> str:
    # Words are letters and digits only (search_terms), so they hold no double quote; a phrase
    # is one quoted string, a plain term its words each quoted.
    if term.phrase:
        return '"' + " ".join(term.words) + '"'
    return " AND ".join(f'"{word}"' for word in term.words)
