"""/audit/<project>/: filters that combine and stay in the URL, keyset pages that neither skip
nor repeat an event, a detail page with every field, and each view itself audited."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from django.test import Client

from audit.models import AuditEvent
from tests.factories import World
from tests.web.content import record_events
from web.selectors.audit import PAGE_SIZE

ROW_LINK = re.compile(r'href="/audit/alpha/events/([0-9a-f-]{36})/')
OLDER = re.compile(r'href="(/audit/alpha/\?[^"]*)">Older events')


def events_of(html: str) -> list[str]:
    return ROW_LINK.findall(html)


def make_events(world: World, count: int, **fields: object) -> list[AuditEvent]:
    return record_events(world.alpha, count, **{"actor_type": "user", **fields})


def test_it_combines_every_filter_and_keeps_them_in_the_url(world: World, client: Client):
    make_events(world, 5, operation="task_update", outcome="rejected", error_code="stale_version")
    wanted = make_events(
        world,
        2,
        operation="task_update",
        outcome="rejected",
        error_code="stale_version",
        actor_label="carla",
        target_type="task",
        target_id="t-1",
        request_id="req-42",
    )
    make_events(world, 3, operation="task_update", outcome="success", actor_label="carla")
    client.force_login(world.owner)
    query = (
        "?actor=carla&operation=task_update&outcome=rejected&error_code=stale_version"
        "&target=task:t-1&request_id=req-42"
    )
    html = client.get(f"/audit/alpha/{query}").content.decode()
    assert sorted(events_of(html)) == sorted(str(e.pk) for e in wanted)
    assert 'value="carla"' in html
    assert 'value="req-42"' in html
    assert 'href="/audit/alpha/">Clear filters' in html
    # A target given as an id alone matches it whatever its type.
    assert len(events_of(client.get("/audit/alpha/?target=t-1").content.decode())) == 2


def test_it_filters_by_a_time_range_in_utc(world: World, client: Client):
    (old,) = make_events(world, 1, operation="sign_in")
    time.sleep(0.01)
    boundary = datetime.now(UTC).replace(tzinfo=None).isoformat()  # read as UTC
    time.sleep(0.01)
    (new,) = make_events(world, 1, operation="sign_in")
    client.force_login(world.owner)
    html = client.get(f"/audit/alpha/?operation=sign_in&until={boundary}").content.decode()
    assert events_of(html) == [str(old.pk)]
    html = client.get(f"/audit/alpha/?operation=sign_in&since={boundary}").content.decode()
    assert events_of(html) == [str(new.pk)]
    refused = client.get("/audit/alpha/?since=2026-01-02T00:00&until=2026-01-01T00:00")
    assert refused.status_code == 400
    assert "Must be later than the start." in refused.content.decode()


def test_it_pages_by_keyset_through_every_event_once_keeping_the_filters(
    world: World, client: Client
):
    make_events(world, 2 * PAGE_SIZE + 7, operation="memory_get")
    make_events(world, 10, operation="task_get")
    client.force_login(world.owner)
    seen: list[str] = []
    url = "/audit/alpha/?operation=memory_get"
    pages = 0
    while url:
        html = client.get(url).content.decode()
        seen += events_of(html)
        pages += 1
        older = OLDER.search(html)
        url = older.group(1).replace("&amp;", "&") if older else ""
        if older:
            assert parse_qs(urlsplit(url).query)["operation"] == ["memory_get"]
    expected = AuditEvent.objects.filter(project_id=world.alpha.pk, operation="memory_get")
    assert pages == 3
    assert seen == [
        str(pk) for pk in expected.order_by("-occurred_at", "-id").values_list("pk", flat=True)
    ]


def test_it_refuses_a_damaged_page_link_plainly(world: World, client: Client):
    client.force_login(world.owner)
    response = client.get("/audit/alpha/?after=not-a-cursor")
    assert response.status_code == 400
    assert "This page link is damaged" in response.content.decode()


def test_it_shows_every_field_of_an_event(world: World, client: Client):
    (event,) = make_events(
        world,
        1,
        request_id="req-7",
        actor_label="ci (carla)",
        actor_id="k-1",
        actor_type="api_key",
        client_id="client-9",
        credential_kind="api_key",
        credential_fingerprint="abc123def456",
        resource="http://testserver/mcp",
        instance="test",
        target_type="task",
        target_id="t-9",
        outcome="rejected",
        error_code="forbidden",
    )
    client.force_login(world.admin)
    html = client.get(f"/audit/alpha/events/{event.pk}/").content.decode()
    for value in (
        str(event.pk),
        "req-7",
        "ci (carla)",
        "k-1",
        "client-9",
        "abc123def456",
        "http://testserver/mcp",
        "t-9",
        "forbidden",
        str(world.alpha.pk),
    ):
        assert value in html, value


def test_it_audits_each_view_of_the_log_after_reading_it(world: World, client: Client):
    client.force_login(world.owner)
    first = client.get("/audit/alpha/").content.decode()
    browse = AuditEvent.objects.filter(project_id=world.alpha.pk, operation="audit_browse")
    assert browse.count() == 1
    assert str(browse.get().pk) not in first  # the page does not list its own view
    row = browse.get()
    assert (row.actor_label, row.outcome, row.credential_kind) == ("olivia", "success", "session")
    client.get("/audit/alpha/?after=broken")
    assert browse.filter(outcome="rejected", error_code="validation_error").count() == 1
    client.get(f"/audit/alpha/events/{row.pk}/")
    viewed = AuditEvent.objects.get(operation="audit_event_view")
    assert (viewed.target_type, viewed.target_id) == ("audit_event", str(row.pk))


def test_it_lists_newest_first(world: World, client: Client):
    events = make_events(world, 3, operation="sign_in")
    client.force_login(world.owner)
    html = client.get("/audit/alpha/?operation=sign_in").content.decode()
    stored = AuditEvent.objects.filter(pk__in=[e.pk for e in events]).order_by(
        "-occurred_at", "-id"
    )
    assert events_of(html) == [str(e.pk) for e in stored]
    assert stored[0].occurred_at - stored[2].occurred_at >= timedelta(0)
