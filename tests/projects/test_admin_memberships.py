"""Owners and admins manage their own projects' memberships in /admin/, within the rules."""

from __future__ import annotations

import pytest
from django.test import Client
from guardian.shortcuts import get_perms

from audit.models import AuditEvent
from projects.models import Membership
from tests.factories import World


def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


def add_url() -> str:
    return "/admin/projects/membership/add/"


def change_url(membership: Membership) -> str:
    return f"/admin/projects/membership/{membership.pk}/change/"


def delete_url(membership: Membership) -> str:
    return f"/admin/projects/membership/{membership.pk}/delete/"


def membership(world: World, who: str) -> Membership:
    return Membership.objects.get(project=world.alpha, user=getattr(world, who))


@pytest.mark.django_db
class TestMembershipAdmin:
    def test_it_lets_a_non_superuser_owner_sign_in_and_see_only_their_projects(
        self, world: World, client: Client
    ):
        response = signed_in(client, world.owner).get("/admin/projects/membership/")
        assert response.status_code == 200
        listed = {m.user.username for m in response.context["cl"].result_list}
        assert listed == {"olivia", "adam", "carla", "victor"}
        assert "oscar" not in listed

    def test_it_keeps_contributors_and_viewers_out_of_the_admin(self, world: World, client: Client):
        for who in ("contributor", "viewer"):
            response = signed_in(client, getattr(world, who)).get("/admin/")
            assert response.status_code == 302
            assert "/admin/login/" in response["Location"]

    def test_it_hides_another_projects_membership(self, world: World, client: Client):
        beta_owner = Membership.objects.get(project=world.beta, user=world.outsider)
        response = signed_in(client, world.owner).get(change_url(beta_owner))
        assert response.status_code == 302  # "does not exist", back to the admin index
        response = client.post(change_url(beta_owner), {"role": "viewer"})
        beta_owner.refresh_from_db()
        assert beta_owner.role == "owner"

    def test_it_lets_an_admin_add_a_contributor_and_audits_it(self, world: World, client: Client):
        from tests.factories import make_user

        newcomer = make_user("nina")
        response = signed_in(client, world.admin).post(
            add_url(), {"project": world.alpha.pk, "username": "nina", "role": "contributor"}
        )
        assert response.status_code == 302, response.content
        added = Membership.objects.get(project=world.alpha, user=newcomer)
        assert added.role == "contributor"
        event = AuditEvent.objects.get(operation="membership_add", target_id=str(added.pk))
        assert (event.outcome, event.actor_label, event.credential_kind) == (
            "success",
            "adam",
            "session",
        )

    @pytest.mark.parametrize("role", ["owner", "admin"])
    def test_it_refuses_an_admin_granting_a_privileged_role(
        self, world: World, client: Client, role: str
    ):
        from tests.factories import make_user

        newcomer = make_user("nina")
        response = signed_in(client, world.admin).post(
            add_url(), {"project": world.alpha.pk, "username": "nina", "role": role}
        )
        assert response.status_code == 200
        assert response.context["adminform"].form.errors
        assert not Membership.objects.filter(user=newcomer).exists()
        event = AuditEvent.objects.filter(operation="membership_add").latest("occurred_at")
        assert (event.outcome, event.error_code) == ("rejected", "forbidden")

    def test_it_shows_an_admin_the_owners_membership_read_only(self, world: World, client: Client):
        owner = membership(world, "owner")
        page = signed_in(client, world.admin).get(change_url(owner))
        assert page.status_code == 200
        assert b'name="role"' not in page.content  # no role offered that the admin cannot grant
        response = client.post(change_url(owner), {"role": "viewer"})  # forged
        assert response.status_code == 403
        owner.refresh_from_db()
        assert owner.role == "owner"
        event = AuditEvent.objects.get(operation="membership_change", target_id=str(owner.pk))
        assert (event.outcome, event.error_code, event.actor_id) == (
            "rejected",
            "forbidden",
            str(world.admin.pk),
        )

    def test_it_refuses_an_admin_forging_a_privileged_role_and_audits_it(
        self, world: World, client: Client
    ):
        carla = membership(world, "contributor")
        response = signed_in(client, world.admin).post(change_url(carla), {"role": "owner"})
        assert response.status_code == 200
        errors = str(response.context["adminform"].form.errors)
        assert "Only an owner of this project can give" in errors
        carla.refresh_from_db()
        assert carla.role == "contributor"
        event = AuditEvent.objects.get(operation="membership_change", target_id=str(carla.pk))
        assert (event.outcome, event.error_code) == ("rejected", "forbidden")

    def test_it_refuses_an_admin_removing_the_owner(self, world: World, client: Client):
        owner = membership(world, "owner")
        response = signed_in(client, world.admin).post(delete_url(owner), {"post": "yes"})
        assert response.status_code == 403
        assert Membership.objects.filter(pk=owner.pk).exists()
        event = AuditEvent.objects.get(operation="membership_remove", target_id=str(owner.pk))
        assert (event.outcome, event.error_code) == ("rejected", "forbidden")

    def test_it_refuses_the_last_owner_demoting_themselves(self, world: World, client: Client):
        owner = membership(world, "owner")
        response = signed_in(client, world.owner).post(change_url(owner), {"role": "admin"})
        assert response.status_code == 200
        assert "keep at least one owner" in str(response.context["adminform"].form.errors)
        owner.refresh_from_db()
        assert owner.role == "owner"
        event = AuditEvent.objects.get(operation="membership_change", target_id=str(owner.pk))
        assert (event.outcome, event.error_code) == ("rejected", "validation_error")

    def test_it_refuses_removing_the_last_owner(self, world: World, client: Client):
        owner = membership(world, "owner")
        response = signed_in(client, world.owner).post(delete_url(owner), {"post": "yes"})
        assert response.status_code == 302
        assert Membership.objects.filter(pk=owner.pk).exists()
        event = AuditEvent.objects.get(operation="membership_remove", target_id=str(owner.pk))
        assert (event.outcome, event.error_code) == ("rejected", "validation_error")

    def test_it_lets_an_owner_hand_over_ownership(self, world: World, client: Client):
        admin = membership(world, "admin")
        owner = membership(world, "owner")
        signed_in(client, world.owner)
        assert client.post(change_url(admin), {"role": "owner"}).status_code == 302
        assert client.post(change_url(owner), {"role": "viewer"}).status_code == 302
        admin.refresh_from_db()
        owner.refresh_from_db()
        assert (admin.role, owner.role) == ("owner", "viewer")

    def test_it_derives_object_permissions_and_staff_from_the_role(
        self, world: World, client: Client
    ):
        contributor = membership(world, "contributor")
        assert get_perms(world.contributor, world.alpha) == []
        assert not world.contributor.is_staff
        signed_in(client, world.owner).post(change_url(contributor), {"role": "admin"})
        world.contributor.refresh_from_db()
        assert world.contributor.is_staff
        assert set(get_perms(world.contributor, world.alpha)) == {
            "manage_members",
            "manage_repositories",
            "manage_api_keys",
        }
        client.post(change_url(contributor), {"role": "viewer"})
        world.contributor.refresh_from_db()
        assert not world.contributor.is_staff
        assert get_perms(world.contributor, world.alpha) == []

    def test_it_lets_an_admin_remove_a_viewer_and_audits_it(self, world: World, client: Client):
        viewer = membership(world, "viewer")
        response = signed_in(client, world.admin).post(delete_url(viewer), {"post": "yes"})
        assert response.status_code == 302
        assert not Membership.objects.filter(pk=viewer.pk).exists()
        event = AuditEvent.objects.get(operation="membership_remove", target_id=str(viewer.pk))
        assert event.outcome == "success"

    def test_it_offers_no_bulk_delete(self, world: World, client: Client):
        response = signed_in(client, world.owner).get("/admin/projects/membership/")
        assert "delete_selected" not in response.context["cl"].model_admin.get_actions(
            response.wsgi_request
        )
