"""Page views are counted, not stored read by read: each page of the web UI makes two or three
audited reads, and a row each buried the project's writes. A view is counted per person, page
and window, exactly; the first of each is an audit event (`page_view`, or `audit_browse` /
`audit_event_view` for the audit log itself). Refusals are still one row each, every export is
an event, and reads over REST and MCP are still one row each."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db.models import Sum
from django.test import Client

from audit.models import AuditEvent, CountedEvent
from tests.continuity.api.helpers import api_for
from tests.factories import World
from tests.web.content import story

pytestmark = pytest.mark.django_db

READS = ("task_board", "memory_timeline", "summary_agents", "task_get", "receipt_list")


def _views(world: World, who: str, page: str) -> int:
    counted = CountedEvent.objects.filter(
        chain=str(world.alpha.pk), subject=f"user:{getattr(world, who).pk}", reason=page
    )
    return int(counted.aggregate(total=Sum("count"))["total"] or 0)


def test_page_views_are_counted_per_person_and_page_not_stored_read_by_read(world: World):
    ids = story(world)
    rows_before = AuditEvent.objects.filter(project_id=world.alpha.pk).count()
    viewer, owner = Client(), Client()
    viewer.force_login(world.viewer)
    owner.force_login(world.owner)
    for _ in range(30):
        assert viewer.get("/projects/alpha/").status_code == 200
        assert viewer.get(f"/projects/alpha/tasks/{ids['task']}/").status_code == 200
    for _ in range(12):
        assert owner.get("/projects/alpha/").status_code == 200
        assert owner.get("/audit/alpha/").status_code == 200

    new_rows = AuditEvent.objects.filter(project_id=world.alpha.pk).count() - rows_before
    # One event per person, page and window (the run may cross into a second window).
    assert 4 <= new_rows <= 8, new_rows
    assert not AuditEvent.objects.filter(operation__in=READS, actor_label="victor").exists()
    assert (_views(world, "viewer", "web:project"), _views(world, "viewer", "web:task")) == (30, 30)
    assert (_views(world, "owner", "web:project"), _views(world, "owner", "web:audit_list")) == (
        12,
        12,
    )
    first = AuditEvent.objects.filter(operation="page_view", actor_label="victor").first()
    assert first is not None
    assert (first.target_type, first.credential_kind, first.outcome) == (
        "page",
        "session",
        "success",
    )
    browse = AuditEvent.objects.filter(operation="audit_browse", actor_label="olivia")
    assert 1 <= browse.count() <= 2
    assert [row.target_id for row in browse] == [str(world.alpha.pk)] * browse.count()


def test_a_refused_read_is_still_a_row_and_counts_no_view(world: World):
    client = Client()
    client.force_login(world.viewer)
    missing = "/projects/alpha/tasks/00000000-0000-4000-8000-000000000000/"
    for _ in range(3):
        assert client.get(missing).status_code == 404
    refused = AuditEvent.objects.filter(
        operation="task_get", outcome="rejected", actor_label="victor"
    )
    assert refused.count() == 3
    assert _views(world, "viewer", "web:task") == 0


def test_every_export_is_an_event(world: World):
    client = Client()
    client.force_login(world.owner)
    for _ in range(3):
        response = client.get("/audit/alpha/export.jsonl")
        b"".join(response.streaming_content)  # type: ignore[attr-defined]
    assert AuditEvent.objects.filter(operation="audit_export", actor_label="olivia").count() == 3


def test_reads_over_rest_are_still_one_row_each(world: World):
    api = api_for(world, "viewer", ("continuity:read",))
    for _ in range(3):
        assert api.get("tasks").status_code == 200
    assert AuditEvent.objects.filter(operation="task_list", outcome="success").count() == 3


def test_the_view_counts_are_in_audit_noise_and_the_admin(world: World, admin_client: Client):
    client = Client()
    client.force_login(world.viewer)
    for _ in range(5):
        client.get("/projects/alpha/memory/")
    out = io.StringIO()
    call_command("audit_noise", stdout=out)
    line = f"{world.alpha.pk}\tuser:{world.viewer.pk}\tpage_view\tweb:memories\t5\t"
    assert line in out.getvalue()
    page = admin_client.get("/admin/audit/countedevent/?q=web:memories").content.decode()
    assert f"user:{world.viewer.pk}" in page
