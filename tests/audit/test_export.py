"""Exports (JSONL and CSV) verify offline, whole or filtered; an edited or dropped line is named."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from audit.export import export_csv, export_jsonl, export_rows
from audit.models import AuditEvent
from audit.verify import verify_file
from tests.factories import World

FORMATS = {"jsonl": export_jsonl, "csv": export_csv}


def _chain_events(world: World) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(project_id=world.alpha.pk).order_by("seq"))


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_whole_chain_verifies_offline(world: World, fmt: str):
    lines = list(FORMATS[fmt](AuditEvent.objects.filter(project_id=world.alpha.pk), filtered=False))
    filtered, [report] = verify_file(lines)
    assert not filtered
    assert report.ok, report.problems
    assert report.events == len(_chain_events(world)) == report.verified_seq


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_filtered_export_verifies_with_gaps_from_filtering(world: World, fmt: str):
    events = AuditEvent.objects.filter(project_id=world.alpha.pk, operation="membership_add")
    assert 2 <= events.count() < len(_chain_events(world))
    filtered, [report] = verify_file(list(FORMATS[fmt](events)))
    assert filtered
    assert report.ok, report.problems
    assert report.filtered_gaps  # positions left out by the filter, not errors


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_an_edited_line_is_named_in_a_filtered_export(world: World, fmt: str):
    events = AuditEvent.objects.filter(project_id=world.alpha.pk, operation="membership_add")
    lines = list(FORMATS[fmt](events))
    victim = events.order_by("seq")[1]
    index = next(i for i, line in enumerate(lines) if str(victim.pk) in line)
    lines[index] = lines[index].replace("success", "rejected")
    _, [report] = verify_file(lines)
    assert str(report.first_problem) == (
        f"chain {world.alpha.pk}: edited at seq {victim.seq} (event {victim.pk}): "
        "its fields do not match its digest"
    )


@pytest.mark.django_db
def test_a_line_dropped_from_a_whole_export_is_missing(world: World):
    lines = list(export_jsonl(AuditEvent.objects.filter(project_id=world.alpha.pk), filtered=False))
    del lines[3]  # the header, then seq 1, 2, 3: seq 3 goes
    _, [report] = verify_file(lines)
    assert str(report.first_problem) == f"chain {world.alpha.pk}: missing at seq 3: events 3 absent"


@pytest.mark.django_db
def test_it_streams_in_batches_in_chain_order(world: World, django_assert_num_queries):
    everything = AuditEvent.objects.all()
    expected = [(e.chain, e.seq) for e in everything.order_by("chain", "seq")]
    pages = -(-len(expected) // 4) + (1 if len(expected) % 4 == 0 else 0)
    with django_assert_num_queries(pages):
        rows = [(row["chain"], row["seq"]) for row in export_rows(everything, batch=4)]
    assert rows == expected


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_commands_export_and_verify_the_file_without_the_database(
    world: World, fmt: str, tmp_path: Path, django_assert_num_queries
):
    target = tmp_path / f"alpha.{fmt}"
    call_command("audit_export", "alpha", "--format", fmt, "--output", str(target))
    out = io.StringIO()
    with django_assert_num_queries(0):
        call_command("verify_audit", "--file", str(target), stdout=out)
    assert f"{world.alpha.pk}: ok, {len(_chain_events(world))} events" in out.getvalue()
    assert "a complete export" in out.getvalue()
    if fmt == "jsonl":
        header = json.loads(target.read_text().splitlines()[0])
        assert header == {"format": "heyaira-audit-export", "version": 1, "filtered": False}
