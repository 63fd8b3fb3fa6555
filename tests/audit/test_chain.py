"""Every event is linked into its project's chain at INSERT; project-less ones into the
security chain; the chain carries each event's own time."""

from __future__ import annotations

import itertools
import time
import uuid

import pytest
from django.utils import timezone

from audit import chain, recorder
from audit.models import AuditChainHead, AuditEvent
from audit.verify import verify_chain
from tests.audit.helpers import security_event
from tests.factories import World


@pytest.mark.django_db
def test_it_links_each_projects_events_in_order_from_one(world: World):
    rows = list(AuditEvent.objects.filter(project_id=world.alpha.pk).order_by("seq"))
    assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
    assert rows[0].prev_hash == ""
    for before, after in itertools.pairwise(rows):
        assert after.prev_hash == before.hash
    for row in rows:
        fields = {name: getattr(row, name) for name in chain.FIELDS}
        assert row.digest == chain.digest(fields)
        assert row.hash == chain.chain_hash(row.prev_hash, row.seq or 0, row.digest)
    head = AuditChainHead.objects.get(chain=str(world.alpha.pk))
    assert (head.seq, head.last_hash) == (rows[-1].seq, rows[-1].hash)


@pytest.mark.django_db
def test_it_keeps_events_of_no_project_in_the_security_chain():
    security_event(n=1)
    security_event(n=2)
    rows = AuditEvent.objects.filter(chain=chain.SECURITY_CHAIN).order_by("seq")
    assert [(row.project_id, row.seq) for row in rows] == [(None, 1), (None, 2)]
    assert verify_chain(chain.SECURITY_CHAIN).ok


@pytest.mark.django_db
def test_it_starts_a_new_chain_per_project_and_verifies_each(world: World):
    other = uuid.uuid4()
    security_event("project_event", project=other)
    assert AuditEvent.objects.get(project_id=other).seq == 1
    for name in (str(world.alpha.pk), str(world.beta.pk), str(other)):
        report = verify_chain(name)
        assert report.ok, report.problems
        assert report.verified_seq == AuditChainHead.objects.get(chain=name).seq


@pytest.mark.django_db(transaction=True)
def test_a_deferred_row_keeps_the_time_of_its_event_not_of_its_writing():
    context = recorder.SecurityContext(request_id="while-away")
    recorder.defer_security_event("authenticate", recorder.Outcome.REJECTED, context)
    happened = timezone.now()
    time.sleep(0.05)  # the database comes back a while later: the flush writes the row then
    recorder.unit_started()
    written = timezone.now()
    assert recorder.flush_pending() == 1
    row = AuditEvent.objects.get(request_id="while-away")
    assert row.occurred_at <= happened < written
    head = AuditChainHead.objects.get(chain=chain.SECURITY_CHAIN)
    assert head.last_time == row.occurred_at
    assert row.seq == 1
    assert row.hash == chain.chain_hash("", 1, row.digest)
    assert chain.digest({n: getattr(row, n) for n in chain.FIELDS}) == row.digest
