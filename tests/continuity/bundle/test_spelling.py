"""On PostgreSQL the export reads values spelled by the database, and for plain-column types the
records' JSON written by the database (records.py, database_json.py); they are the very bytes the
ORM's values give when Python spells and encodes them, for every record type and the audit chain,
including text that JSON must escape and times on a whole second."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection

from audit import chain as audit_chain
from continuity.bundle.format import canonical
from continuity.bundle.records import (
    TYPES,
    _audit_bodies_from_database,
    _audit_bodies_from_models,
)
from continuity.models import Memory, StateVersion
from tests.factories import World

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the database spells values on PostgreSQL only"
)

# Every control character, the characters JSON escapes by name, and some that it must not.
AWKWARD = (
    'quote " backslash \\ slash / tab \t newline \n return \r bell \x07 del \x7f '
    + "".join(chr(code) for code in range(1, 32))
    + " é 漢字 🙂 \u2028 \u2029 \ufeff end"
)


@pytest.mark.django_db
def test_the_database_writes_every_record_as_python_does(small: World) -> None:
    project = small.alpha
    awkward = Memory.objects.create(
        project=project,
        kind="decision",
        title=AWKWARD[:200],
        content=AWKWARD,
        rationale=AWKWARD,
        source=AWKWARD[:500],
        author="olivia",
    )
    on_the_second = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.UTC)  # auto_now_add: set after
    Memory.objects.filter(pk=awkward.pk).update(created_at=on_the_second)
    StateVersion.objects.create(
        project=project, agent="awkward", version=1, body=AWKWARD, author="olivia"
    )
    by_database = [kind for kind in TYPES if kind._plain_columns()]
    assert {"project", "memory", "task_dependency"} <= {kind.name for kind in by_database}
    for kind in TYPES:
        from_python = []
        for document in kind._read_models(project):
            if kind.complete is not None:
                kind.complete(document)
            document["record"] = kind.name
            from_python.append(canonical(document))
        assert from_python, kind.name
        assert list(kind.bodies(project)) == from_python, kind.name
        if kind._plain_columns():
            assert list(kind._bodies_from_database(project)) == from_python, kind.name
    chain = audit_chain.chain_of(project.pk)
    from_database = list(_audit_bodies_from_database(chain))
    assert len(from_database) > 1
    assert from_database == list(_audit_bodies_from_models(chain))
    memory = next(body for body in TYPES[3].bodies(project) if str(awkward.pk).encode() in body)
    assert b'"created_at":"2026-03-01T12:00:00.000000Z"' in memory
    assert b"\\u0007" in memory
    assert "漢字 🙂".encode() in memory
