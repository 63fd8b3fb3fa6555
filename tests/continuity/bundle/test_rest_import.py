"""POST /api/v1/import: an owner's key puts a bundle into its own project while that project holds
no records; the records keep their ids, the bundle's audit chain is archived as it was, and the
project's own chain goes on with the import. Everything else is refused, audited, and leaves
nothing."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from audit import chain
from audit.filters import AuditEventFilter
from audit.models import AuditEvent
from audit.state import project_chains
from continuity.models import Memory, Task
from core.access import Role
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import Membership, Project
from tests.continuity.bundle.conftest import export_bytes, vanish
from tests.continuity.helpers import add_note
from tests.factories import World, add_member, make_project
from web.selectors.audit import filtered_events

pytestmark = pytest.mark.django_db
WRITE = ["continuity:read", "continuity:write"]


def _post(project: Project, user: Any, body: bytes, query: str = "", **extra: Any) -> Any:
    key = api_key_create(
        operator_caller(project), user_id=user.pk, label="import", scopes=extra.pop("scopes", WRITE)
    ).secret
    return Client().generic(
        "POST",
        f"/api/v1/import{query}",
        body,
        content_type="application/x-ndjson",
        headers={"Authorization": f"Bearer {key}"},
    )


@pytest.fixture
def moved(small: World) -> tuple[bytes, Any]:
    """alpha's bundle, and alpha gone (its ids free), as if the bundle came from elsewhere."""
    bundle = export_bytes("alpha")
    source = small.alpha.pk
    vanish(small.alpha)
    return bundle, source


def _rejections(project: Project) -> list[tuple[str, str]]:
    rows = AuditEvent.objects.filter(project_id=project.pk, operation="project_import")
    return list(rows.filter(outcome="rejected").values_list("outcome", "error_code"))


def test_an_owner_imports_into_an_empty_project(small: World, moved) -> None:
    bundle, source = moved
    gamma = make_project("gamma", small.owner)
    answer = _post(gamma, small.owner, bundle)
    assert answer.status_code == 201, answer.content
    report = answer.json()
    assert report["project"] == {"id": str(gamma.pk), "slug": "gamma"}
    assert report["bundle"] == json.loads(bundle.splitlines()[-1])["digest"]
    lines = [json.loads(line) for line in bundle.splitlines()[1:-1]]
    memories = sorted(r["id"] for r in lines if r["record"] == "memory")
    assert report["counts"]["memory"] == len(memories) == 10
    assert (
        sorted(str(pk) for pk in Memory.objects.filter(project=gamma).values_list("pk", flat=True))
        == memories
    )
    assert Task.objects.filter(project=gamma).count() == report["counts"]["task"]
    # No one is made a member over REST, though the bundle's members are users here.
    assert len(report["not_added"]) == report["counts"]["membership"] == 4
    members = Membership.objects.filter(project=gamma).values_list("user__username", flat=True)
    assert list(members) == ["olivia"]

    gamma.refresh_from_db()
    assert gamma.audit_archive == str(source)
    assert project_chains(gamma) == [chain.chain_of(source), chain.chain_of(gamma.pk)]
    last = AuditEvent.objects.filter(chain=chain.chain_of(gamma.pk)).order_by("-seq").first()
    assert last is not None
    assert (last.operation, last.outcome, last.target_id) == (
        "project_import",
        "success",
        report["bundle"],
    )
    out = io.StringIO()
    call_command("verify_audit", "gamma", stdout=out)
    assert out.getvalue().count(": ok, ") == 2
    # gamma's audit log lists the archived events with its own.
    archived = AuditEvent.objects.filter(project_id=source).count()
    listed = filtered_events(gamma, AuditEventFilter(None))
    assert listed.count() == archived + AuditEvent.objects.filter(project_id=gamma.pk).count()
    # A key without continuity:write imports nothing.
    assert _post(gamma, small.owner, bundle, scopes=["continuity:read"]).status_code == 403

    # The project holds records now: a second import is a typed conflict, audited.
    again = _post(gamma, small.owner, bundle)
    assert again.status_code == 409
    error = again.json()["error"]
    assert error["code"] == "project_not_empty"
    assert "memories" in error["holds"]
    assert ("rejected", "project_not_empty") in _rejections(gamma)


def test_the_same_bundle_into_a_second_empty_project_is_refused(small: World, moved) -> None:
    bundle, source = moved
    gamma = make_project("gamma", small.owner)
    assert _post(gamma, small.owner, bundle).status_code == 201
    events = AuditEvent.objects.filter(project_id=source).count()
    delta = make_project("delta", small.owner)
    answer = _post(delta, small.owner, bundle)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "validation_error"
    assert "already" in answer.json()["error"]["fields"]["body"]
    assert not Memory.objects.filter(project=delta).exists()
    assert AuditEvent.objects.filter(project_id=source).count() == events
    assert _rejections(delta) == [("rejected", "validation_error")]


def test_a_project_with_records_is_refused_before_reading_the_bundle(small: World, moved) -> None:
    bundle, _ = moved
    delta = make_project("delta", small.owner)
    add_note(operator_caller(delta), "already here")
    answer = _post(delta, small.owner, bundle)
    assert answer.status_code == 409
    assert answer.json()["error"]["holds"] == ["memories"]
    assert Memory.objects.filter(project=delta).count() == 1
    assert Task.objects.filter(project=delta).count() == 0


def test_a_tampered_bundle_is_refused_naming_the_line_and_nothing_is_kept(
    small: World, moved
) -> None:
    bundle, source = moved
    delta = make_project("delta", small.owner)
    lines = bundle.splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, 1) if b'"record":"task"' in line)
    lines[number - 1] = lines[number - 1].replace(b'"title":"Task', b'"title":"Tusk', 1)
    answer = _post(delta, small.owner, b"".join(lines))
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "validation_error"
    assert error["fields"]["body"].startswith(f"line {number}: its seal does not match")
    assert not Memory.objects.filter(project=delta).exists()
    assert not AuditEvent.objects.filter(project_id=source).exists()
    delta.refresh_from_db()
    assert delta.audit_archive == ""
    assert _rejections(delta) == [("rejected", "validation_error")]


def test_a_dry_run_reports_and_keeps_nothing(small: World, moved) -> None:
    bundle, source = moved
    delta = make_project("delta", small.owner)
    answer = _post(delta, small.owner, bundle, "?dry_run=true")
    assert answer.status_code == 200
    assert answer.json()["dry_run"] is True
    assert answer.json()["counts"]["memory"] == 10
    assert not Memory.objects.filter(project=delta).exists()
    assert not AuditEvent.objects.filter(project_id=source).exists()


@pytest.mark.parametrize("role", [Role.ADMIN, Role.CONTRIBUTOR])
def test_only_owners_import(small: World, moved, role: Role) -> None:
    bundle, _ = moved
    delta = make_project("delta", small.owner)
    add_member(delta, small.contributor, role)
    answer = _post(delta, small.contributor, bundle)
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "forbidden"
    assert not Memory.objects.filter(project=delta).exists()
    assert _rejections(delta) == [("rejected", "forbidden")]


def test_the_schema_describes_the_import(client: Client) -> None:
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/import"]["post"]
    assert operation["operationId"] == "project_import"
    assert "application/x-ndjson" in operation["requestBody"]["content"]
    assert {"201", "400", "403", "409", "413"} <= set(operation["responses"])


def test_its_export_carries_both_projects_chains_and_goes_on_elsewhere(
    small: World, moved, tmp_path
) -> None:
    bundle, source = moved
    gamma = make_project("gamma", small.owner)
    assert _post(gamma, small.owner, bundle).status_code == 201
    again = export_bytes("gamma")
    events = [json.loads(line) for line in again.splitlines()[1:-1]]
    chains = [e["chain"] for e in events if e["record"] == "audit_event"]
    firsts = [chains.index(name) for name in dict.fromkeys(chains)]
    assert [chains[i] for i in firsts] == [chain.chain_of(source), chain.chain_of(gamma.pk)]

    # project_import elsewhere keeps both chains archived and starts gamma's second.
    gamma.refresh_from_db()
    vanish(gamma)
    path = tmp_path / "gamma.jsonl"
    path.write_bytes(again)
    call_command("project_import", str(path), stdout=io.StringIO())
    there = Project.objects.get(slug="gamma")
    assert there.audit_archive == str(source)
    assert project_chains(there) == [
        chain.chain_of(source),
        chain.chain_of(gamma.pk),
        chain.chain_of(gamma.pk, 2),
    ]
    out = io.StringIO()
    call_command("verify_audit", "gamma", stdout=out)
    assert out.getvalue().count(": ok, ") == 3
