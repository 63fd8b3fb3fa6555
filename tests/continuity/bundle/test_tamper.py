"""A bundle edited after export is refused, naming the first bad line, and nothing is kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from audit.models import AuditChainHead, AuditEvent
from continuity.models import Memory, Task
from projects.models import Project
from tests.continuity.bundle.conftest import export_bytes, vanish
from tests.factories import World

pytestmark = pytest.mark.django_db


def _refused(tmp_path, data: bytes) -> str:
    path = tmp_path / "bundle.jsonl"
    path.write_bytes(data)
    with pytest.raises(CommandError) as caught:
        call_command("project_import", str(path))
    return str(caught.value)


def _nothing_imported(project_id: Any) -> None:
    assert not Project.objects.filter(pk=project_id).exists()
    assert not Memory.objects.filter(project_id=project_id).exists()
    assert not Task.objects.filter(project_id=project_id).exists()
    assert not AuditEvent.objects.filter(chain__startswith=str(project_id)).exists()
    assert not AuditChainHead.objects.filter(chain__startswith=str(project_id)).exists()


@pytest.fixture
def bundle(small: World) -> tuple[list[bytes], Any]:
    data = export_bytes("alpha")
    vanish(small.alpha)
    return data.splitlines(keepends=True), small.alpha.pk


def test_it_refuses_one_byte_changed_naming_the_line(tmp_path, bundle) -> None:
    lines, project_id = bundle
    number = 30
    lines[number - 1] = lines[number - 1].replace(b'"record":', b'"record" :', 1)
    assert "line 30: its seal does not match" in _refused(tmp_path, b"".join(lines))
    _nothing_imported(project_id)


def test_it_refuses_an_edited_value_that_is_still_valid_json(tmp_path, bundle) -> None:
    lines, project_id = bundle
    number = next(i for i, line in enumerate(lines, 1) if b'"record":"task"' in line)
    lines[number - 1] = lines[number - 1].replace(b'"title":"Task', b'"title":"Tusk', 1)
    assert f"line {number}: its seal does not match" in _refused(tmp_path, b"".join(lines))
    _nothing_imported(project_id)


def test_it_refuses_a_line_removed_naming_the_line_after_it(tmp_path, bundle) -> None:
    lines, project_id = bundle
    del lines[40 - 1]
    assert "line 40: its seal does not match" in _refused(tmp_path, b"".join(lines))
    _nothing_imported(project_id)


def test_it_refuses_a_bundle_without_its_trailer(tmp_path, bundle) -> None:
    lines, project_id = bundle
    message = _refused(tmp_path, b"".join(lines[:-1]))
    assert f"line {len(lines)}: the trailer is missing" in message
    _nothing_imported(project_id)


def test_it_refuses_the_last_record_removed(tmp_path, bundle) -> None:
    lines, project_id = bundle
    del lines[-2]
    message = _refused(tmp_path, b"".join(lines))
    assert f"line {len(lines)}: the trailer counts" in message
    _nothing_imported(project_id)


def test_it_refuses_a_newer_format_version_clearly(tmp_path, bundle) -> None:
    lines, project_id = bundle
    header = json.loads(lines[0])
    header.pop("seal")
    header["version"] = 2
    from continuity.bundle.format import Writer

    lines[0] = Writer().header({k: v for k, v in header.items() if k != "record"})
    message = _refused(tmp_path, b"".join(lines))
    assert "line 1: the bundle is format version 2; this server reads version 1" in message
    _nothing_imported(project_id)


def test_it_imports_the_untouched_bundle_once_and_refuses_it_twice(tmp_path, bundle) -> None:
    lines, project_id = bundle
    path = tmp_path / "bundle.jsonl"
    path.write_bytes(b"".join(lines))
    call_command("project_import", str(path))
    assert Project.objects.filter(pk=project_id).exists()
    memories = Memory.objects.filter(project_id=project_id).count()
    with pytest.raises(CommandError) as caught:
        call_command("project_import", str(path), "--slug", "alpha-again")
    assert "already holds project alpha" in str(caught.value)
    assert Memory.objects.filter(project_id=project_id).count() == memories
