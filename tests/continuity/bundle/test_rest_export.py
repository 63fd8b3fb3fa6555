"""GET /api/v1/export: owners and admins get the bundle, streamed and audited, the same bytes as
project_export; everyone else is refused, and the refusal is audited."""

from __future__ import annotations

import warnings

import pytest

from audit.models import AuditEvent
from tests.continuity.api.helpers import api_for, error_of
from tests.continuity.bundle.conftest import export_bytes
from tests.factories import World

pytestmark = pytest.mark.django_db
EXPORT = ("continuity:read", "audit:read")


def _body(answer) -> bytes:
    # Django's test client is WSGI: it reads the async stream whole (and says so); the live
    # test (test_live.py) reads it as a server sends it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return b"".join(answer)


def test_an_owner_gets_the_bundle_and_it_is_the_commands_bytes(small: World) -> None:
    answer = api_for(small, "owner", EXPORT).get("export")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/x-ndjson"
    assert answer["Content-Disposition"] == 'attachment; filename="heyaira-alpha.jsonl"'
    body = _body(answer)
    assert body == export_bytes("alpha")
    assert body.endswith(b'"record":"trailer"}\n')
    event = AuditEvent.objects.filter(project_id=small.alpha.pk, operation="project_export")
    assert list(event.values_list("outcome", "target_id")) == [("success", str(small.alpha.pk))]


def test_an_admin_gets_it_too(small: World) -> None:
    assert api_for(small, "admin", EXPORT).get("export").status_code == 200


@pytest.mark.parametrize("who", ["contributor", "viewer"])
def test_members_below_admin_are_refused_and_it_is_audited(small: World, who: str) -> None:
    answer = api_for(small, who, ("continuity:read",)).get("export")
    assert answer.status_code == 403
    assert error_of(answer)["code"] == "forbidden"
    refused = AuditEvent.objects.filter(project_id=small.alpha.pk, operation="project_export")
    assert list(refused.values_list("outcome", "error_code")) == [("rejected", "forbidden")]


def test_an_owners_key_without_audit_read_is_asked_for_it(small: World) -> None:
    answer = api_for(small, "owner", ("continuity:read",)).get("export")
    assert answer.status_code == 403
    assert "audit:read" in str(error_of(answer))


def test_no_credential_no_bundle(small: World, client) -> None:
    assert client.get("/api/v1/export").status_code == 401
