"""Canonical JSON written by PostgreSQL, for the bundle's big tables.

`to_json` spells a value as JSON as Python's json does with ensure_ascii=False: numbers as
they are, strings with quote, backslash, \\b \\f \\n \\r \\t escaped, other control characters as
\\u00xx in lower case, everything else as it is. Each row's object is those values joined with
their keys in sorted order and no spaces: format.canonical's bytes, byte for byte
(tests/continuity/bundle/test_spelling.py holds the two to that). A million rows then cost the
export one string each, not a dict to build and encode. (`row_to_json` writes the same text,
but at 1.7 times the database's time: it builds a row value for each row first.)

The rows come through COPY in binary format, as UTF-8 bytes: the server writes rows while the
export seals and writes the ones before (a cursor's fetches would leave each side waiting for
the other), and no text is decoded only to be encoded again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import connection

_KEY = re.compile(r"[a-z_]+")


def canonical_rows(
    record: str,
    keys: Sequence[tuple[str, str]],
    *,
    table: str,
    where: str,
    order: str,
    params: Sequence[Any],
) -> Iterator[bytes]:
    """Each row of `table` matching `where`, in `order`, as canonical JSON with its "record"
    key: `keys` pairs a key with the SQL expression of its value (spelled as the bundle spells
    it). The names and expressions come from the code, never from input; values are
    parameters."""
    sql = (
        f"COPY (SELECT convert_to({object_sql(record, keys)}, 'UTF8') FROM {table} "  # noqa: S608
        f"WHERE {where} ORDER BY {order}) TO STDOUT (FORMAT BINARY)"
    )
    with connection.cursor() as cursor, cursor.cursor.copy(sql, list(params)) as copy:
        copy.set_types(["bytea"])
        for (body,) in copy.rows():
            yield body


def object_sql(record: str, keys: Sequence[tuple[str, str]]) -> str:
    """SQL for the text of one JSON object, keys sorted: `{"a":<value>,"record":"memory"}`.
    The record's name is the same on every row, so it is written into the SQL as it is."""
    columns = {key: f"COALESCE(to_json({expression})::text, 'null')" for key, expression in keys}
    parts: list[str] = []
    for index, (key, value) in enumerate(sorted({**columns, "record": None}.items())):
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a plain key: {key!r}")
        opening = ("{" if index == 0 else ",") + json.dumps(key) + ":"
        if value is None:  # the record's name, a constant
            if not _KEY.fullmatch(record):
                raise ValueError(f"not a plain record name: {record!r}")
            parts.append(f"'{opening}{json.dumps(record)}'")
        else:
            parts += [f"'{opening}'", value]
    return " || ".join([*parts, "'}'"])
