"""On PostgreSQL the export reads values spelled by the database (records.py); they are the very
values the ORM reads and Python spells, for every record type and the audit chain, including
text that JSON must escape and times on a whole second."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection

from audit import chain as audit_chain
from audit.export import COLUMNS, chain_rows
from continuity.bundle.records import TYPES, audit_events
from continuity.models import Memory
from tests.factories import World

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the database spells values on PostgreSQL only"
)

AWKWARD = 'quote " backslash \\ tab \t newline \n bell \x07 del \x7f é 漢字 🙂 \u2028 end'


@pytest.mark.django_db
def test_the_database_spells_every_value_as_python_does(small: World) -> None:
    project = small.alpha
    awkward = Memory.objects.create(
        project=project, kind="note", title=AWKWARD[:200], content=AWKWARD, author="olivia"
    )
    on_the_second = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.UTC)  # auto_now_add: set after
    Memory.objects.filter(pk=awkward.pk).update(created_at=on_the_second)
    spelled_types = [kind for kind in TYPES if kind._own_columns()]
    assert {"project", "memory", "task", "receipt"} <= {kind.name for kind in spelled_types}
    for kind in spelled_types:
        from_database = list(kind._read_spelled(project))
        assert from_database, kind.name
        assert from_database == list(kind._read_models(project)), kind.name
    spelled = list(audit_events(project))
    from_python = [
        {name: row[name] for name in COLUMNS}
        for row in chain_rows(audit_chain.chain_of(project.pk))
    ]
    assert spelled == from_python
    assert len(spelled) > 1
    memories = [doc for doc in TYPES[3]._read_spelled(project) if doc["content"] == AWKWARD]
    assert memories[0]["created_at"] == "2026-03-01T12:00:00.000000Z"
