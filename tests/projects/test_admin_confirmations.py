"""Every irreversible action in the admin asks first, naming what will end: removing a member
(their role, their keys, their apps), ending an auditor's access, revoking API keys or OAuth
tokens. And what
the admin preselects or prints does not mislead: a new membership starts as viewer, and every
time carries its zone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from guardian.shortcuts import assign_perm

from audit.models import AuditEvent
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import AuditorGrant, Membership, Project
from tests.factories import World, make_user

pytestmark = pytest.mark.django_db


def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


def test_removing_a_member_names_their_role_keys_and_apps_first(world: World, client: Client):
    for label in ("ci-bot", "laptop"):
        api_key_create(
            operator_caller(world.alpha),
            user_id=world.contributor.pk,
            label=label,
            scopes=["continuity:read"],
        )
    carla = Membership.objects.get(project=world.alpha, user=world.contributor)
    url = f"/admin/projects/membership/{carla.pk}/delete/"

    asked = signed_in(client, world.admin).get(url)

    assert asked.status_code == 200
    assert asked.context["title"] == "Remove carla from Alpha?"
    assert [str(item) for item in asked.context["ending"].items] == [
        "carla's contributor role in Alpha (alpha)",
        "2 API keys acting for them: 'ci-bot' and 'laptop'",
        "every app carla connected to alpha (its tokens)",
    ]
    page = asked.content.decode()
    assert "carla loses access to alpha at once" in page
    assert 'value="Yes, remove carla"' in page
    assert "No, take me back" in page
    assert Membership.objects.filter(pk=carla.pk).exists()  # asking ends nothing

    done = client.post(url, {"post": "yes"})

    assert done.status_code == 302
    assert not Membership.objects.filter(pk=carla.pk).exists()
    assert AuditEvent.objects.filter(operation="membership_remove", outcome="success").exists()


def test_ending_an_auditor_reads_as_what_they_lose(world: World, client: Client):
    audrey = make_user("audrey")
    assign_perm("projects.view_project_audit", audrey, world.alpha)
    grant = AuditorGrant.objects.get(user=audrey)
    assert str(grant) == "audrey may read alpha's audit log"

    asked = signed_in(client, world.owner).get(f"/admin/projects/auditorgrant/{grant.pk}/delete/")

    assert asked.status_code == 200
    page = asked.content.decode()
    assert asked.context["title"] == "Stop audrey reading alpha's audit log?"
    assert "audrey may read alpha&#x27;s audit log" in page
    assert "view_project_audit" not in page
    assert " | " not in asked.context["title"]
    assert 'value="Yes, stop audrey reading it"' in page
    listed = signed_in(client, world.owner).get("/admin/projects/auditorgrant/")
    assert "view_project_audit" not in listed.content.decode()


def test_a_bulk_revoke_names_every_key_and_skips_revoked_ones(world: World, client: Client):
    keys = [
        api_key_create(
            operator_caller(world.alpha),
            user_id=world.viewer.pk,
            label=label,
            scopes=["continuity:read"],
        ).api_key
        for label in ("ci-bot", "deploy", "laptop")
    ]
    keys[2].revoked_at = keys[2].created_at
    keys[2].save(update_fields=["revoked_at"])
    chosen = {"action": "revoke_selected", "_selected_action": [str(k.pk) for k in keys]}

    asked = signed_in(client, world.owner).post("/admin/projects/apikey/", chosen)

    assert asked.status_code == 200
    ending = asked.context["ending"]
    assert ending.question == "Revoke 2 API keys: 'ci-bot' and 'deploy'?"
    assert ending.items[0].startswith("'ci-bot' (hak_")
    assert ending.items[0].endswith("in alpha, acting for victor")
    assert ending.consequence.startswith("Agents using them will get 401 at once.")
    assert ending.notes == ["1 selected key is revoked already."]
    assert ending.confirm == "Yes, revoke 2 keys"


def test_a_new_membership_starts_as_viewer(world: World, client: Client):
    form = signed_in(client, world.owner).get("/admin/projects/membership/add/")
    field = form.context["adminform"].form["role"]
    assert field.value() == "viewer"
    assert '<option value="viewer" selected>' in form.content.decode()


def test_admin_times_carry_their_zone(world: World, client: Client):
    page = signed_in(client, world.owner).get("/admin/projects/membership/")
    cells = page.content.decode().split('class="field-updated_at nowrap">')[1:]
    assert cells, "no updated_at column"
    assert all(cell.split("<", 1)[0].endswith(" UTC") for cell in cells)
    key = api_key_create(
        operator_caller(world.alpha), user_id=world.viewer.pk, label="k", scopes=["continuity:read"]
    ).api_key
    detail = client.get(f"/admin/projects/apikey/{key.pk}/change/")
    created = detail.content.decode().split("field-created_at", 1)[1]
    shown = key.created_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert f'<div class="readonly">{shown}</div>' in created


def test_revoking_oauth_tokens_in_bulk_names_the_apps_first(world: World, client: Client):
    """django-oauth-toolkit's own bulk revoke acted at once; it asks first, like every other."""
    from identity.models import AccessToken, Application, RefreshToken

    app = Application.objects.create(
        name="Journey app",
        client_id="journey",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:8765/callback",
    )
    access = AccessToken.objects.create(
        user=world.contributor,
        project=world.alpha,
        application=app,
        token="access-1",
        token_checksum=f"{1:064x}",
        expires=timezone.now() + timedelta(hours=1),
        scope="continuity:read",
    )
    refresh = RefreshToken.objects.create(
        user=world.contributor,
        project=world.alpha,
        application=app,
        token="refresh-1",
        token_checksum=f"{2:064x}",
        access_token=access,
    )
    root = signed_in(client, make_user("root", is_superuser=True, is_staff=True))
    chosen = {"action": "revoke_tokens", "_selected_action": [str(refresh.pk)]}

    asked = root.post("/admin/oauth/refreshtoken/", chosen)

    assert asked.status_code == 200
    assert asked.context["ending"].question == "Revoke 1 refresh token?"
    assert asked.context["ending"].items == [f"Journey app for carla in alpha (#{refresh.pk})"]
    assert "get 401 at once" in asked.content.decode()
    refresh.refresh_from_db()
    assert refresh.revoked is None  # asking ends nothing

    done = root.post("/admin/oauth/refreshtoken/", {**chosen, "confirmed": "yes"})

    assert done.status_code == 302
    refresh.refresh_from_db()
    assert refresh.revoked is not None
    assert not AccessToken.objects.filter(pk=access.pk).exists()


def test_deleting_a_project_counts_what_it_holds_and_takes_its_slug_typed(
    world: World, client: Client
):
    api_key_create(
        operator_caller(world.alpha), user_id=world.viewer.pk, label="k", scopes=["continuity:read"]
    )
    url = f"/admin/projects/project/{world.alpha.pk}/delete/"
    owner = signed_in(client, world.owner)

    asked = owner.get(url)

    assert asked.status_code == 200
    ending = asked.context["ending"]
    assert ending.question == "Delete the project Alpha (alpha) and everything it holds?"
    assert "4 memberships" in ending.items
    assert "1 API key" in ending.items
    assert "This cannot be undone" in ending.consequence
    assert 'name="confirm_slug"' in asked.content.decode()

    refused = owner.post(url, {"post": "yes", "confirm_slug": "alph"}, follow=True)
    assert "does not match alpha; nothing was deleted" in refused.content.decode()
    assert Project.objects.filter(pk=world.alpha.pk).exists()
    rejected = AuditEvent.objects.get(operation="project_delete")
    assert (rejected.outcome, rejected.error_code) == ("rejected", "validation_error")

    done = owner.post(url, {"post": "yes", "confirm_slug": "alpha"})

    assert done.status_code == 302
    assert not Project.objects.filter(pk=world.alpha.pk).exists()
    assert AuditEvent.objects.filter(operation="project_delete", outcome="success").exists()


def test_an_admin_cannot_delete_the_project(world: World, client: Client):
    url = f"/admin/projects/project/{world.alpha.pk}/delete/"
    assert (
        signed_in(client, world.admin)
        .post(url, {"post": "yes", "confirm_slug": "alpha"})
        .status_code
        == 403
    )
    assert Project.objects.filter(pk=world.alpha.pk).exists()
