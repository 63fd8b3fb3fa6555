"""The audit list's exports: exactly the filtered set, streamed, in the format `verify_audit
--file` checks; the chain's state on the list and each event's place and proof on its page."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from audit.export import export_csv, read_export
from audit.models import AuditEvent
from audit.verify import verify_file
from tests.factories import World
from tests.web.content import record_events, story


def download(client: Client, url: str) -> tuple[Any, list[str]]:
    response = client.get(url)
    assert response.status_code == 200, url
    assert response.streaming
    text = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    return response, text.splitlines(keepends=True)


def verified(lines: list[str]) -> tuple[bool, list[Any]]:
    filtered, reports = verify_file(io.StringIO("".join(lines)))
    assert all(report.ok for report in reports), [str(p) for r in reports for p in r.problems]
    return filtered, reports


def test_it_exports_the_whole_chain_as_json_lines_that_verify(world: World, client: Client):
    story(world)
    client.force_login(world.owner)
    response, lines = download(client, "/audit/alpha/export.jsonl")
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="heyaira-audit-alpha-')
    filtered, reports = verified(lines)
    assert filtered is False
    ids = {row["id"] for row in read_export(lines)[1]}
    stored = AuditEvent.objects.filter(project_id=world.alpha.pk)
    # Every event of the project, this download's own audit row included.
    assert ids == {str(pk) for pk in stored.values_list("pk", flat=True)}
    assert AuditEvent.objects.filter(operation="audit_export", actor_label="olivia").count() == 1
    assert reports[0].verified_seq == stored.count()


def test_it_exports_exactly_the_filtered_set_as_csv_that_verifies(world: World, client: Client):
    story(world)
    record_events(world.alpha, 3, operation="task_update", outcome="rejected", error_code="x")
    client.force_login(world.admin)
    query = "?operation=task_update&outcome=success"
    response, lines = download(client, f"/audit/alpha/export.csv{query}")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    filtered, _ = verified(lines)
    assert filtered is True
    rows = list(read_export(lines)[1])
    wanted = AuditEvent.objects.filter(
        project_id=world.alpha.pk, operation="task_update", outcome="success"
    )
    assert sorted(row["id"] for row in rows) == sorted(
        str(pk) for pk in wanted.values_list("pk", flat=True)
    )
    assert len(rows) == 2  # the story's two updates; not the three rejections


def test_its_csv_is_a_plain_csv_whose_first_line_is_the_header(world: World, client: Client):
    story(world)
    client.force_login(world.owner)
    _, lines = download(client, "/audit/alpha/export.csv?operation=task_update")
    read = list(csv.DictReader(lines))  # as any CSV reader takes it
    assert [row["operation"] for row in read] == ["task_update", "task_update"]
    assert {row["export"] for row in read} == {"filtered"}
    assert "id" in read[0]
    assert "hash" in read[0]
    assert not lines[0].startswith("#")
    _, whole = download(client, "/audit/alpha/export.csv")
    assert {row["export"] for row in csv.DictReader(whole)} == {"complete"}
    filtered, _ = verified(whole)
    assert filtered is False  # verify_audit --file still knows a whole chain from a filtered set


def test_a_csv_whose_rows_disagree_on_being_complete_is_refused(world: World, client: Client):
    story(world)
    client.force_login(world.owner)
    _, lines = download(client, "/audit/alpha/export.csv")
    lines[-1] = lines[-1].rstrip("\n").rsplit(",", 1)[0] + ",filtered\n"
    with pytest.raises(ValueError, match="rows disagree"):
        verify_file(io.StringIO("".join(lines)))


def test_a_csv_exported_with_the_former_comment_line_still_verifies(world: World):
    story(world)
    events = AuditEvent.objects.filter(project_id=world.alpha.pk)
    plain = list(export_csv(events, filtered=False))
    header = [name for name in next(csv.reader([plain[0]])) if name != "export"]
    former = ["# heyaira-audit-export version=1 filtered=false\n", ",".join(header) + "\n"]
    former += [line.rstrip("\n").rsplit(",", 1)[0] + "\n" for line in plain[1:]]
    filtered, reports = verified(former)
    assert filtered is False
    assert reports[0].events == events.count()


def test_its_links_carry_the_lists_filters(world: World, client: Client):
    client.force_login(world.owner)
    html = client.get("/audit/alpha/?operation=sign_in&actor=carla").content.decode()
    assert 'href="/audit/alpha/export.jsonl?actor=carla&amp;operation=sign_in"' in html
    assert 'href="/audit/alpha/export.csv?actor=carla&amp;operation=sign_in"' in html


def test_it_refuses_exports_to_everyone_else_and_bad_filters_plainly(world: World, client: Client):
    for who in ("viewer", "contributor", "outsider"):
        client.force_login(getattr(world, who))
        assert client.get("/audit/alpha/export.jsonl").status_code == 404, who
    client.force_login(world.owner)
    assert client.get("/audit/alpha/export.xml").status_code == 404
    refused = client.get("/audit/alpha/export.csv?since=yesterday")
    assert refused.status_code == 400
    row = AuditEvent.objects.get(operation="audit_export")
    assert (row.outcome, row.error_code) == ("rejected", "validation_error")


def test_it_shows_the_chains_state_verified_and_checkpointed(world: World, client: Client):
    story(world)
    client.force_login(world.owner)
    html = client.get("/audit/alpha/").content.decode()
    assert "never: run <code>manage.py verify_audit alpha</code>" in html
    call_command("verify_audit", "alpha", stdout=io.StringIO())
    call_command("audit_checkpoint", stdout=io.StringIO())
    head = AuditEvent.objects.filter(project_id=world.alpha.pk).order_by("-seq").first()
    assert head is not None
    html = client.get("/audit/alpha/").content.decode()
    assert f"up to event {head.seq} of {head.seq}, by <code>verify_audit</code>" in html
    assert f"event {head.seq} (hash <code title=" in html  # the checkpoint


def test_it_shows_an_events_place_and_whether_its_hashes_match(world: World, client: Client):
    (event,) = record_events(world.alpha, 1, operation="sign_in")
    client.force_login(world.owner)
    html = client.get(f"/audit/alpha/events/{event.pk}/").content.decode()
    assert f"<dd>event {event.seq} of " in html
    assert "match its fields and its place" in html
    assert event.hash in html
    assert "not yet: <code>verify_audit</code> has not run" in html
    call_command("verify_audit", "alpha", stdout=io.StringIO())
    html = client.get(f"/audit/alpha/events/{event.pk}/").content.decode()
    assert "yes, by <code>verify_audit</code>" in html


def test_its_batches_neither_skip_nor_repeat_an_event_across_chains(world: World):
    from audit.export import export_rows

    record_events(world.alpha, 7, operation="sign_in")
    record_events(world.beta, 5, operation="sign_in")
    events = AuditEvent.objects.filter(operation="sign_in")
    whole = [row["id"] for row in export_rows(events, batch=10_000)]
    assert [row["id"] for row in export_rows(events, batch=3)] == whole
    assert len(whole) == 12
    assert [row["id"] for row in export_rows(events, batch=1)] == whole
