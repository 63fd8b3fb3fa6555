"""Append-only in the database: every ORM and SQL path that would change or remove an audit row
is refused by the triggers (PostgreSQL; SQLite where it has the statement), not only by the
default manager."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.models import QuerySet

from audit.models import AuditChainHead, AuditEvent
from tests.audit.helpers import security_event, sql

TABLE = "audit_auditevent"

PATHS: dict[str, Callable[[AuditEvent], object]] = {
    "_base_manager delete": lambda e: AuditEvent._base_manager.filter(pk=e.pk).delete(),
    "plain QuerySet delete": lambda e: QuerySet(AuditEvent).filter(pk=e.pk).delete(),
    "plain QuerySet update": lambda e: QuerySet(AuditEvent).filter(pk=e.pk).update(operation="x"),
    "_raw_delete": lambda e: QuerySet(AuditEvent).filter(pk=e.pk)._raw_delete(connection.alias),
    "save(force_update=True)": lambda e: super(AuditEvent, e).save(force_update=True),
    "SQL UPDATE": lambda e: sql(f"UPDATE {TABLE} SET error_code = 'x'"),  # noqa: S608
    "SQL DELETE": lambda e: sql(f"DELETE FROM {TABLE}"),  # noqa: S608
}


@pytest.fixture
def event(db: None) -> AuditEvent:
    security_event(n=1)
    return AuditEvent.objects.get()


@pytest.mark.parametrize("path", list(PATHS))
def test_it_refuses_every_way_to_change_or_remove_a_row(event: AuditEvent, path: str):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        PATHS[path](event)
    assert AuditEvent.objects.get().error_code == "invalid_credentials"


@pytest.mark.postgres
def test_it_refuses_truncate_on_postgresql(event: AuditEvent):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        sql(f"TRUNCATE {TABLE}")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        sql(f"TRUNCATE {TABLE} CASCADE")
    assert AuditEvent.objects.count() == 1


def test_it_refuses_to_move_a_chain_head_back_or_remove_it(event: AuditEvent):
    with pytest.raises(DatabaseError, match="only advances"), transaction.atomic():
        AuditChainHead.objects.update(seq=0)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditChainHead.objects.all().delete()
    assert AuditChainHead.objects.get().seq == 1


def test_it_gives_every_row_its_place_whatever_the_insert_says(event: AuditEvent):
    """A forged position in an INSERT is not taken: the trigger assigns the next one (on
    SQLite the insert is refused instead, as its trigger cannot rewrite the row)."""
    forged = AuditEvent(actor_type="anonymous", operation="forged", outcome="rejected")
    forged.chain, forged.digest, forged.seq, forged.hash = "security", "0" * 64, 99, "f" * 64
    if connection.vendor == "sqlite":
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            forged.save(force_insert=True)
        return
    forged.save(force_insert=True)
    row = AuditEvent.objects.get(operation="forged")
    assert (row.seq, row.prev_hash) == (2, event.hash)
    assert row.hash != "f" * 64
