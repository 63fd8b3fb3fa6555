"""`heyaira import FILE` against a live server on its own database: an owner's key puts a bundle
made here into its own empty project; reads there equal the reads here (ids and versions
included), both audit chains verify; a second import and a tampered bundle are refused, typed,
and leave nothing."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from continuity.models import Memory, Task
from tests.client.conftest import Home, Seat
from tests.continuity.api.helpers import api_for
from tests.continuity.bundle.conftest import export_bytes
from tests.continuity.bundle.projects import fill
from tests.factories import World

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bundle(world: World, tmp_path: Path) -> Path:
    fill(world.caller("owner"), memories=10, tasks=6, audit_events=60)
    path = tmp_path / "alpha.jsonl"
    path.write_bytes(export_bytes("alpha"))
    return path


def test_an_owner_imports_a_bundle_into_an_empty_project(
    world: World, bundle: Path, seat: Seat, home: Home
) -> None:
    seat.saved(home)
    done = home.cli("import", str(bundle))
    assert done.returncode == 0, done.stderr
    digest = json.loads(bundle.read_bytes().splitlines()[-1])["digest"]
    assert f"imported bundle {digest} into project {seat.slug}" in done.stdout
    assert "  memory: 10" in done.stdout
    assert "member not added (add members in the admin): olivia" in done.stdout

    verified = seat.server.manage("verify_audit", seat.slug)
    assert f"{world.alpha.pk}: ok, " in verified  # the bundle's chain, archived
    assert verified.count(": ok, ") == 2

    here = api_for(world, "owner", ("continuity:read",))
    paths = [
        f"tasks/{pk}"
        for pk in Task.objects.filter(project=world.alpha).values_list("pk", flat=True)
    ]
    paths += [
        f"memories/{pk}"
        for pk in Memory.objects.filter(project=world.alpha).values_list("pk", flat=True)
    ]
    paths += ["tasks?limit=50", "memories?limit=100"]
    headers = {"Authorization": f"Bearer {seat.key}"}
    with httpx2.Client(timeout=30) as http:
        for path in paths:
            there = http.get(f"{seat.server.api_url}/v1/{path}", headers=headers)
            assert there.status_code == 200, path
            assert there.json() == here.get(path).json(), path

    again = home.cli("import", str(bundle))
    assert again.returncode == 5
    assert "project_not_empty" in again.stderr
    assert seat.counts()["memories"] == 10


def test_a_tampered_bundle_is_refused_naming_the_line(
    bundle: Path, seat: Seat, home: Home, tmp_path: Path
) -> None:
    seat.saved(home)
    lines = bundle.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, 1) if b'"kind":"note"' in line)
    lines[number - 1] = lines[number - 1].replace(b'"kind":"note"', b'"kind":"nope"', 1)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_bytes(b"".join(lines))
    done = home.cli("import", str(tampered))
    assert done.returncode == 5
    assert "validation_error" in done.stderr
    assert f"line {number}: its seal does not match" in done.stderr
    assert seat.counts() == {
        "memories": 0,
        "tasks": 0,
        "receipts": 0,
        "states": 0,
        "write_audit": 0,
    }
    refused = seat.rows(
        "from audit.models import AuditEvent\n"
        "result = list(AuditEvent.objects.filter(project_id=project.pk, "
        "operation='project_import').values_list('outcome', 'error_code'))"
    )
    assert [tuple(row) for row in refused] == [("rejected", "validation_error")]
