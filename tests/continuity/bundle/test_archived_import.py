"""An import keeps the bundle's audit chains as they are, archived, and starts the project's new
chain with an event naming the bundle's digest; a second export carries both, and importing that
bundle archives both and starts a third."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from audit import chain
from audit.models import AuditChainHead, AuditEvent
from audit.state import chain_state, project_chains
from continuity.models import Memory
from continuity.selectors import memory_get
from projects.callers import operator_caller
from projects.models import Project
from tests.continuity.bundle.conftest import export_bytes, vanish
from tests.continuity.helpers import add_note
from tests.factories import World

pytestmark = pytest.mark.django_db


def _import(tmp_path: Path, data: bytes) -> Project:
    path = tmp_path / "bundle.jsonl"
    path.write_bytes(data)
    call_command("project_import", str(path), stdout=io.StringIO())
    return Project.objects.get(slug="alpha")


def _data(bundle: bytes) -> list[bytes]:
    return bundle.splitlines(keepends=True)[1:-1]


def _digest(bundle: bytes) -> str:
    return str(json.loads(bundle.splitlines()[-1])["digest"])


def _events(lines: list[bytes]) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in lines]
    return [record for record in records if record["record"] == "audit_event"]


def _verified(slug: str) -> str:
    out = io.StringIO()
    call_command("verify_audit", slug, stdout=out)
    return out.getvalue()


def test_the_bundles_chain_is_archived_and_a_new_one_starts(small: World, tmp_path: Path) -> None:
    first = export_bytes("alpha")
    archived = chain.chain_of(small.alpha.pk)
    head = AuditChainHead.objects.get(chain=archived)
    vanish(small.alpha)

    project = _import(tmp_path, first)
    live = chain.chain_of(project.pk, 2)
    assert project.audit_chain == live
    assert project_chains(project) == [archived, live]
    # The archived chain is as it was exported, its head the same, nothing added to it.
    kept = AuditChainHead.objects.get(chain=archived)
    assert (kept.seq, kept.last_hash) == (head.seq, head.last_hash)
    start = AuditEvent.objects.get(chain=live, seq=1)
    assert (start.operation, start.target_type, start.target_id) == (
        "project_import",
        "bundle",
        _digest(first),
    )
    assert start.prev_hash == ""
    assert chain_state(chain.live_chain(project)).head.events == 1  # type: ignore[union-attr]

    # New events go to the live chain; verify_audit SLUG walks both chains.
    add_note(operator_caller(project), "after the move")
    assert AuditEvent.objects.filter(chain=archived).count() == head.seq
    report = _verified("alpha")
    assert f"{archived}: ok, {head.seq} events" in report
    assert f"{live}: ok, " in report
    call_command("verify_audit", stdout=io.StringIO())  # every chain

    # Importing the same bundle again is refused, and leaves the chains as they are.
    with pytest.raises(CommandError, match="already holds project"):
        _import(tmp_path, first)


def test_a_second_export_carries_the_archived_events_as_they_were(
    small: World, tmp_path: Path
) -> None:
    first = export_bytes("alpha")
    vanish(small.alpha)
    project = _import(tmp_path, first)
    read = Memory.objects.filter(project=project).order_by("pk").first()
    assert read is not None
    memory_get(operator_caller(project), memory_id=read.pk)  # a read is audited, nothing more
    second = export_bytes("alpha")

    # Every data line of the first bundle comes again, byte for byte, then the live chain's
    # events (seals chain from line to line: only records added at the end keep the lines
    # before them as they were, and audit events come last).
    assert _data(second)[: len(_data(first))] == _data(first)
    added = _events(_data(second)[len(_data(first)) :])
    assert {event["chain"] for event in added} == {chain.chain_of(project.pk, 2)}
    assert [event["seq"] for event in added] == list(range(1, len(added) + 1))
    assert [event["operation"] for event in added] == ["project_import", "memory_get"]
    assert added[0]["target_id"] == _digest(first)
    header = json.loads(second.splitlines()[0])
    assert header["counts"]["audit_event"] == len(_events(_data(second)))

    # That bundle elsewhere: both chains archived, a third started.
    vanish(project)
    again = _import(tmp_path, second)
    assert again.audit_chain == chain.chain_of(project.pk, 3)
    assert project_chains(again) == [chain.chain_of(project.pk, g) for g in (1, 2, 3)]
    start = AuditEvent.objects.get(chain=again.audit_chain, seq=1)
    assert start.target_id == _digest(second)
    assert _data(export_bytes("alpha"))[: len(_data(second))] == _data(second)
    assert _verified("alpha").count(": ok, ") == 3


def test_it_refuses_a_chain_of_another_project_or_out_of_order(
    small: World, tmp_path: Path
) -> None:
    data = export_bytes("alpha")
    vanish(small.alpha)
    project = _import(tmp_path, data)
    add_note(operator_caller(project), "after the move")
    second = export_bytes("alpha")
    vanish(project)
    lines = second.splitlines(keepends=True)
    # The later chain's events moved before the archived one's: refused at the first of them,
    # before the seals (rewritten here) are even in doubt.
    first_event = next(i for i, line in enumerate(lines) if b'"record":"audit_event"' in line)
    later = next(i for i, line in enumerate(lines) if f'"{project.pk}.2"'.encode() in line)
    moved = lines[:first_event] + lines[later:-1] + lines[first_event:later] + lines[-1:]
    with pytest.raises(CommandError, match=f"line {first_event + 1}: its seal does not match"):
        _import(tmp_path, b"".join(moved))
    assert not Project.objects.filter(pk=project.pk).exists()
    assert not AuditChainHead.objects.filter(chain__startswith=str(project.pk)).exists()
