"""Invitations, through the pages: owners and admins invite by email with a role they may give,
the link works once and until it expires, a new person sets a password (Django's validators)
and lands in the project, an existing person signs in and accepts, pending invitations are
listed and revoked after a confirmation, and every step and every refusal is audited.

The refusals each have a test here: an expired link, a used link, a role above the inviter's,
a revoked invitation (and an unknown link, and an inviter who lost the right to invite)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.utils import timezone

from audit.models import AnonymousRejection, AuditEvent
from projects.callers import operator_caller
from projects.invitations import token_digest
from projects.models import Invitation, Membership
from projects.services import membership_change
from tests.factories import World, make_user

pytestmark = pytest.mark.django_db

PAGE = "/projects/alpha/invitations/"
GOOD_PASSWORD = "a-long-and-unusual-passphrase-42"
LINK = re.compile(r"http://[^\s]+/invitations/([A-Za-z0-9_-]{43})/")


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def invite(client: Client, email: str = "nina@example.com", role: str = "contributor") -> Any:
    return client.post(PAGE, {"email": email, "role": role})


def invited(client: Client, email: str = "nina@example.com", role: str = "contributor") -> str:
    """Invite, follow to the one-time page, and return the link's token as the mail has it."""
    response = invite(client, email, role)
    assert response.status_code == 302, response.content.decode()
    page = client.get(response["Location"]).content.decode()
    mailed = LINK.search(str(mail.outbox[-1].body))
    assert mailed is not None
    assert mailed.group(0) in page  # the page shows the same link, once
    return mailed.group(1)


def audit(operation: str) -> list[tuple[str, str]]:
    events = AuditEvent.objects.filter(operation=operation).order_by("occurred_at", "pk")
    return list(events.values_list("outcome", "error_code"))


def test_an_owner_invites_by_email_and_sees_the_link_once(world: World):
    owner = signed_in(world.owner)
    response = invite(owner)

    assert response.status_code == 302
    invitation = Invitation.objects.get()
    assert (invitation.email, invitation.role, invitation.invited_by) == (
        "nina@example.com",
        "contributor",
        world.owner,
    )
    assert response["Location"] == f"{PAGE}{invitation.pk}/sent/"
    (message,) = mail.outbox
    assert message.to == ["nina@example.com"]
    assert message.subject == "olivia invites you to Alpha on HeyAira"
    found = LINK.search(str(message.body))
    assert found is not None
    token = found.group(1)
    # Only a hash is stored: the token is nowhere in the database.
    assert invitation.token_hash == token_digest(token)
    assert not Invitation.objects.filter(token_hash=token).exists()
    assert not AuditEvent.objects.filter(target_id__contains=token).exists()

    sent = owner.get(response["Location"]).content.decode()
    assert f"/invitations/{token}/" in sent
    again = owner.get(response["Location"]).content.decode()
    assert token not in again
    assert "shown once and cannot be shown again" in again
    listed = owner.get(PAGE).content.decode()
    assert "nina@example.com" in listed
    assert token not in listed
    assert audit("invitation_create") == [("success", "")]


def test_the_role_offered_starts_at_viewer_and_an_admin_is_offered_only_what_they_may_give(
    world: World,
):
    form = signed_in(world.admin).get(PAGE).context["form"]
    assert [value for value, _ in form.fields["role"].choices] == ["viewer", "contributor"]
    assert form["role"].value() == "viewer"
    owners = signed_in(world.owner).get(PAGE).context["form"]
    assert [value for value, _ in owners.fields["role"].choices] == [
        "viewer",
        "contributor",
        "admin",
        "owner",
    ]


@pytest.mark.parametrize("role", ["admin", "owner"])
def test_it_refuses_a_role_above_the_inviters_and_audits_it(world: World, role: str):
    response = invite(signed_in(world.admin), role=role)

    assert response.status_code == 400
    assert "only an owner can invite an" in response.content.decode()
    assert not Invitation.objects.exists()
    assert not mail.outbox
    assert audit("invitation_create") == [("rejected", "forbidden")]


def test_contributors_viewers_and_outsiders_find_no_invitation_page(world: World):
    for who in ("contributor", "viewer", "outsider"):
        client = signed_in(getattr(world, who))
        assert client.get(PAGE).status_code == 404
        assert invite(client).status_code == 404
    assert not Invitation.objects.exists()


def test_a_new_person_sets_a_password_and_lands_in_the_project(world: World):
    token = invited(signed_in(world.owner))
    nina = Client()

    opened = nina.get(f"/invitations/{token}/")
    assert opened.status_code == 302
    assert opened["Location"] == "/invitations/accept/"  # the token goes no further
    page = nina.get("/invitations/accept/")
    assert "olivia invites you (nina@example.com)" in page.content.decode()

    weak = nina.post(
        "/invitations/accept/",
        {"username": "nina", "password1": "password", "password2": "password"},
    )
    assert weak.status_code == 400
    assert "This password is too common." in weak.content.decode()
    assert not get_user_model().objects.filter(username="nina").exists()

    joined = nina.post(
        "/invitations/accept/",
        {"username": "nina", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD},
    )

    assert joined.status_code == 302
    assert joined["Location"] == "/projects/alpha/"
    user = get_user_model().objects.get(username="nina")
    assert user.email == "nina@example.com"
    assert user.check_password(GOOD_PASSWORD)
    assert Membership.objects.get(project=world.alpha, user=user).role == "contributor"
    home = nina.get("/projects/alpha/").content.decode()
    assert "you are contributor" in home
    assert "Welcome to Alpha: you are contributor here." in home
    assert audit("invitation_accept") == [("rejected", "validation_error"), ("success", "")]
    added = AuditEvent.objects.get(operation="membership_add", actor_label="nina")
    assert added.project_id == world.alpha.pk


def test_a_used_link_is_refused_and_the_refusal_audited(world: World):
    token = invited(signed_in(world.owner))
    first = Client()
    first.get(f"/invitations/{token}/")
    first.post(
        "/invitations/accept/",
        {"username": "nina", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD},
    )

    again = Client().get(f"/invitations/{token}/")

    assert again.status_code == 410
    assert "used already: a link works once" in again.content.decode()
    assert audit("invitation_accept")[-1] == ("rejected", "invitation_used")
    assert Membership.objects.filter(project=world.alpha).count() == 5


def test_a_link_opened_twice_before_either_accepts_still_joins_once(world: World):
    token = invited(signed_in(world.owner))
    one, two = Client(), Client()
    one.get(f"/invitations/{token}/")
    two.get(f"/invitations/{token}/")
    form = {"username": "nina", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD}
    assert one.post("/invitations/accept/", form).status_code == 302

    late = two.post("/invitations/accept/", {**form, "username": "nina2"})

    assert late.status_code == 410
    assert not get_user_model().objects.filter(username="nina2").exists()
    assert audit("invitation_accept")[-1] == ("rejected", "invitation_used")


def test_an_expired_link_is_refused_and_the_refusal_audited(world: World):
    token = invited(signed_in(world.owner))
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    refused = Client().get(f"/invitations/{token}/")

    assert refused.status_code == 410
    assert "This invitation has expired." in refused.content.decode()
    assert audit("invitation_accept") == [("rejected", "invitation_expired")]
    listed = signed_in(world.owner).get(PAGE).content.decode()
    assert "nina@example.com" not in listed  # no longer waiting


def test_a_link_that_expires_while_open_is_refused_on_accepting(world: World):
    token = invited(signed_in(world.owner))
    nina = Client()
    nina.get(f"/invitations/{token}/")
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    refused = nina.post(
        "/invitations/accept/",
        {"username": "nina", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD},
    )

    assert refused.status_code == 410
    assert not get_user_model().objects.filter(username="nina").exists()


def test_a_revoked_invitation_is_confirmed_first_then_its_link_refused(world: World):
    owner = signed_in(world.owner)
    token = invited(owner)
    invitation = Invitation.objects.get()
    url = f"{PAGE}{invitation.pk}/revoke/"

    asked = owner.get(url).content.decode()
    assert "Revoke the invitation for nina@example.com?" in asked
    assert "Revoking ends the link at once" in asked
    invitation.refresh_from_db()
    assert invitation.revoked_at is None  # asking ends nothing

    done = owner.post(url, follow=True)
    assert "Revoked the invitation for nina@example.com" in done.content.decode()
    assert done.context["invitations"] == []

    refused = Client().get(f"/invitations/{token}/")
    assert refused.status_code == 410
    assert "This invitation was withdrawn." in refused.content.decode()
    assert audit("invitation_revoke") == [("success", "")]
    assert audit("invitation_accept") == [("rejected", "invitation_revoked")]


def test_an_admin_cannot_revoke_an_owners_invitation_to_admin(world: World):
    invited(signed_in(world.owner), role="admin")
    invitation = Invitation.objects.get()

    signed_in(world.admin).post(f"{PAGE}{invitation.pk}/revoke/")

    invitation.refresh_from_db()
    assert invitation.revoked_at is None
    assert audit("invitation_revoke") == [("rejected", "forbidden")]


def test_an_unknown_link_is_refused_and_counted_without_a_project(world: World):
    refused = Client().get("/invitations/" + "x" * 43 + "/")

    assert refused.status_code == 404
    assert "This invitation link is not valid." in refused.content.decode()
    assert AnonymousRejection.objects.get(operation="invitation_accept").count == 1
    assert not audit("invitation_accept")


def test_a_signed_in_person_accepts_as_themselves(world: World):
    dave = make_user("dave", email="dave@example.com")
    token = invited(signed_in(world.owner), email="someone@example.com", role="viewer")
    browser = signed_in(dave)
    browser.get(f"/invitations/{token}/")
    page = browser.get("/invitations/accept/").content.decode()
    assert "You are signed in as <strong>dave</strong>" in page

    joined = browser.post("/invitations/accept/")

    assert joined["Location"] == "/projects/alpha/"
    assert Membership.objects.get(project=world.alpha, user=dave).role == "viewer"
    event = AuditEvent.objects.get(operation="invitation_accept", outcome="success")
    assert event.actor_label == "dave"


def test_an_existing_address_signs_in_then_accepts(world: World):
    make_user("erin", email="Erin@Example.com")
    token = invited(signed_in(world.owner), email="erin@example.com")
    erin = Client()
    erin.get(f"/invitations/{token}/")
    page = erin.get("/invitations/accept/")
    assert "exists already: sign in to accept" in page.content.decode()
    assert page.context["form"] is None  # no second account for the address
    sign_in = page.context["sign_in"]
    assert sign_in == "/accounts/login/?next=/invitations/accept/"

    signed = erin.post(sign_in, {"username": "erin", "password": "pw-erin-Xy7!"})
    assert signed["Location"] == "/invitations/accept/"
    assert erin.post("/invitations/accept/")["Location"] == "/projects/alpha/"
    assert Membership.objects.filter(project=world.alpha, user__username="erin").exists()


def test_a_member_cannot_accept_again(world: World):
    token = invited(signed_in(world.owner), email="carla@example.com", role="admin")
    carla = signed_in(world.contributor)
    carla.get(f"/invitations/{token}/")

    refused = carla.post("/invitations/accept/")

    assert refused.status_code == 400
    assert "You are a member of Alpha already, as contributor." in refused.content.decode()
    assert Membership.objects.get(project=world.alpha, user=world.contributor).role == (
        "contributor"
    )


def test_an_invitation_from_an_admin_demoted_since_cannot_be_accepted(world: World):
    token = invited(signed_in(world.admin))
    adam = Membership.objects.get(project=world.alpha, user=world.admin)
    membership_change(operator_caller(world.alpha), membership_id=adam.pk, role="viewer")
    nina = Client()
    nina.get(f"/invitations/{token}/")

    refused = nina.post(
        "/invitations/accept/",
        {"username": "nina", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD},
    )

    assert refused.status_code == 410
    assert "can no longer give this role" in refused.content.decode()
    assert audit("invitation_accept")[-1] == ("rejected", "invitation_inviter")


def test_it_refuses_a_second_invitation_to_an_address_still_waiting(world: World):
    owner = signed_in(world.owner)
    invited(owner)

    again = invite(owner, email="NINA@example.com")

    assert again.status_code == 400
    assert "has an invitation waiting already" in again.content.decode()
    assert Invitation.objects.count() == 1


def test_it_refuses_an_address_that_is_not_one(world: World):
    response = invite(signed_in(world.owner), email="not an address")
    assert response.status_code == 400
    assert "is not an email address" in response.content.decode()
    assert audit("invitation_create") == [("rejected", "validation_error")]


def test_the_admins_memberships_link_to_each_projects_invitations(world: World):
    page = signed_in(world.admin).get("/admin/projects/membership/").content.decode()
    assert f'<a href="{PAGE}">Invite to Alpha by email</a>' in page
    assert "/projects/beta/invitations/" not in page  # only the projects they manage
