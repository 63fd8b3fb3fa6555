"""PostgreSQL takes an archived chain's events linked already (project_import), but only as a
whole new chain: one not linked to the event before it is refused, and into a chain that has a
head an event gets the next place whatever its insert says."""

from __future__ import annotations

import uuid

import pytest
from django.db import DatabaseError, connection, transaction

from audit import chain
from audit.models import AuditChainHead, AuditEvent
from tests.audit.helpers import security_event

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _linked(name: str, seq: int, prev_hash: str, **changes: object) -> AuditEvent:
    fields = {
        "id": uuid.uuid4(),
        "occurred_at": chain.decode_time("2026-01-01T00:00:00.000000Z"),
        "chain": name,
        "actor_type": "operator",
        "project_id": uuid.UUID(name),
        "operation": "memory_add",
        "outcome": "success",
    }
    digest = chain.digest(fields)
    event = AuditEvent(**fields, digest=digest, seq=seq, prev_hash=prev_hash)
    event.hash = chain.chain_hash(prev_hash, seq, digest)
    for name_, value in changes.items():
        setattr(event, name_, value)
    return event


def _adopt(name: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT audit_chain_adopt(%s)", [name])
        return int(cursor.fetchone()[0])


def test_a_new_chain_comes_in_linked_and_gets_its_head_once() -> None:
    name = str(uuid.uuid4())
    first = _linked(name, 1, "")
    second = _linked(name, 2, first.hash)
    AuditEvent.objects.bulk_create([first, second])
    assert _adopt(name) == 2
    head = AuditChainHead.objects.get(chain=name)
    assert (head.seq, head.prev_hash, head.last_hash) == (2, first.hash, second.hash)
    security_event(project=uuid.UUID(name))  # the chain goes on as any other
    assert AuditChainHead.objects.get(chain=name).seq == 3


@pytest.mark.parametrize(
    "wrong",
    ["skipping a place", "a wrong link", "a wrong hash", "a first event that is not first"],
)
def test_it_refuses_a_linked_event_that_is_not_the_next_of_a_new_chain(wrong: str) -> None:
    name = str(uuid.uuid4())
    first = _linked(name, 1, "")
    AuditEvent.objects.bulk_create([first])
    if wrong == "a first event that is not first":
        event = _linked(str(uuid.uuid4()), 2, first.hash)
    elif wrong == "skipping a place":
        event = _linked(name, 3, first.hash)
    elif wrong == "a wrong link":
        event = _linked(name, 2, "0" * 64)
    else:
        event = _linked(name, 2, first.hash, hash="f" * 64)
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.bulk_create([event])


def test_into_a_chain_with_a_head_a_linked_event_gets_the_next_place() -> None:
    name = str(uuid.uuid4())
    first = _linked(name, 1, "")
    AuditEvent.objects.bulk_create([first])
    _adopt(name)
    AuditEvent.objects.bulk_create([_linked(name, 7, "0" * 64, hash="f" * 64)])
    row = AuditEvent.objects.get(chain=name, seq=2)
    assert row.prev_hash == first.hash
    assert row.hash == chain.chain_hash(first.hash, 2, row.digest)
