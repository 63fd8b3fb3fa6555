"""The project page offers owners and admins the project's bundle; others neither see the link
nor get the file, and the refusal is audited."""

from __future__ import annotations

import warnings

import pytest
from django.test import Client

from audit.models import AuditEvent
from tests.continuity.bundle.conftest import export_bytes
from tests.factories import World

pytestmark = pytest.mark.django_db
LINK = "/projects/alpha/export.jsonl"


def _signed_in(world: World, who: str) -> Client:
    client = Client()
    client.force_login(getattr(world, who))
    return client


@pytest.mark.parametrize("who", ["owner", "admin"])
def test_owners_and_admins_download_the_bundle(world: World, who: str) -> None:
    client = _signed_in(world, who)
    assert LINK in client.get("/projects/alpha/").content.decode()
    answer = client.get(LINK)
    assert answer.status_code == 200
    assert answer["Content-Disposition"] == 'attachment; filename="heyaira-alpha.jsonl"'
    with warnings.catch_warnings():  # the test client reads the async stream whole
        warnings.simplefilter("ignore")
        body = b"".join(answer)
    assert body == export_bytes("alpha")
    events = AuditEvent.objects.filter(project_id=world.alpha.pk, operation="project_export")
    assert list(events.values_list("outcome", flat=True)) == ["success"]


@pytest.mark.parametrize("who", ["contributor", "viewer"])
def test_other_members_see_no_link_and_get_no_file(world: World, who: str) -> None:
    client = _signed_in(world, who)
    assert LINK not in client.get("/projects/alpha/").content.decode()
    assert client.get(LINK).status_code == 404
    events = AuditEvent.objects.filter(project_id=world.alpha.pk, operation="project_export")
    assert list(events.values_list("outcome", "error_code")) == [("rejected", "forbidden")]
