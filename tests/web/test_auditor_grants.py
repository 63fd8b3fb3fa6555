"""Owners make people auditors of one project in the admin, and end it there; each grant,
revocation and refusal is an audit event of the project."""

from __future__ import annotations

from django.test import Client

from audit.models import AuditEvent
from core.errors import Forbidden
from projects.auditors import auditor_grant
from projects.callers import session_caller
from projects.models import AuditorGrant
from tests.factories import World, make_user

ADD = "/admin/projects/auditorgrant/add/"


def signed_in(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


def test_an_owner_grants_and_revokes_an_auditor_in_the_admin_and_both_are_audited(world: World):
    auditor = make_user("audrey")
    olivia = signed_in(world.owner)
    page = olivia.get(ADD).content.decode()
    assert 'for="id_username">Username:</label>' in page
    assert 'for="id_project">Project:</label>' in page
    added = olivia.post(ADD, {"project": str(world.alpha.pk), "username": "audrey"})
    assert added.status_code == 302, added.content.decode()
    audrey = signed_in(auditor)
    assert audrey.get("/audit/alpha/").status_code == 200

    granted = AuditEvent.objects.get(operation="auditor_grant")
    assert (granted.project_id, granted.outcome, granted.actor_label, granted.target_id) == (
        world.alpha.pk,
        "success",
        "olivia",
        str(auditor.pk),
    )
    grant = AuditorGrant.objects.get(user=auditor)
    removed = olivia.post(f"/admin/projects/auditorgrant/{grant.pk}/delete/", {"post": "yes"})
    assert removed.status_code == 302
    assert audrey.get("/audit/alpha/").status_code == 404
    revoked = AuditEvent.objects.get(operation="auditor_revoke")
    assert (revoked.outcome, revoked.target_id) == ("success", str(auditor.pk))


def test_an_admin_cannot_make_auditors_and_the_refusal_is_audited(world: World):
    make_user("audrey")
    adam = signed_in(world.admin)
    assert adam.get(ADD).status_code == 403  # the page is for owners
    caller = session_caller(world.admin, world.alpha)
    assert caller is not None
    try:
        auditor_grant(caller, user_id=world.viewer.pk)
    except Forbidden:
        pass
    else:
        raise AssertionError("an admin granted audit access")
    row = AuditEvent.objects.get(operation="auditor_grant")
    assert (row.outcome, row.error_code, row.actor_label) == ("rejected", "forbidden", "adam")
    assert not AuditorGrant.objects.exists()


def test_it_says_so_when_the_person_is_already_an_auditor(world: World):
    make_user("audrey")
    olivia = signed_in(world.owner)
    olivia.post(ADD, {"project": str(world.alpha.pk), "username": "audrey"})
    again = olivia.post(ADD, {"project": str(world.alpha.pk), "username": "audrey"})
    assert "already an auditor of this project" in again.content.decode()
    assert AuditorGrant.objects.count() == 1


def test_an_owner_sees_only_the_auditors_of_their_own_projects(world: World):
    audrey = make_user("audrey")
    beta_owner = session_caller(world.outsider, world.beta)
    assert beta_owner is not None
    auditor_grant(beta_owner, user_id=audrey.pk)
    html = signed_in(world.owner).get("/admin/projects/auditorgrant/").content.decode()
    assert "audrey" not in html
    assert (
        "audrey" in signed_in(world.outsider).get("/admin/projects/auditorgrant/").content.decode()
    )
