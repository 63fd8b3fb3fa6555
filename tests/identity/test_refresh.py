"""Refresh tokens rotate, keep their audience and project, never widen, and end after 30 days."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.utils import timezone

from core.access import Role
from identity.models import RefreshToken
from projects.callers import operator_caller
from projects.models import Membership
from projects.services import membership_change
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import API, MCP, bearer, last_event, refresh, register, tokens_for


def test_it_rotates_the_refresh_token_and_keeps_the_binding(world: World, api: Client):
    oauth = register(api)
    first = tokens_for(signed_in(world.owner), oauth, world.alpha, resource=API)
    original = RefreshToken.objects.get()

    response = refresh(api, oauth, first["refresh_token"])

    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    second = response.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["expires_in"] == 900
    assert api.get("/api/v1/identity", headers=bearer(second["access_token"])).status_code == 200
    assert api.get("/api/v1/identity", headers=bearer(first["access_token"])).status_code == 401
    rotated = RefreshToken.objects.get(revoked__isnull=True)
    assert rotated.token_family == original.token_family
    assert rotated.family_started == original.family_started
    assert (rotated.project_id, rotated.resource) == (world.alpha.pk, [API])
    event = last_event("oauth_token_refresh")
    assert (event.outcome, event.project_id, event.resource) == ("success", world.alpha.pk, API)


def test_it_refuses_a_refresh_naming_another_resource(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha, resource=MCP)

    response = refresh(api, oauth, tokens["refresh_token"], resource=API)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "invalid_target"
    event = last_event("oauth_token_refresh")
    assert (event.outcome, event.error_code) == ("rejected", "invalid_target")
    # Refused before anything was consumed.
    assert refresh(api, oauth, tokens["refresh_token"]).status_code == 200


def test_it_refuses_a_refresh_asking_a_wider_scope(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha, scope="continuity:read")

    response = refresh(api, oauth, tokens["refresh_token"], scope="continuity:read audit:read")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_scope"
    event = last_event("oauth_token_refresh")
    assert (event.outcome, event.error_code) == ("rejected", "invalid_scope")


def test_it_narrows_the_scope_when_asked(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha)
    response = refresh(api, oauth, tokens["refresh_token"], scope="continuity:read")
    assert response.json()["scope"] == "continuity:read"


def test_it_caps_refreshed_scopes_to_the_current_role(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.admin), oauth, world.alpha)
    assert tokens["scope"] == "audit:read continuity:read continuity:write"
    membership = Membership.objects.get(project=world.alpha, user=world.admin)
    membership_change(operator_caller(world.alpha), membership_id=membership.pk, role=Role.VIEWER)

    response = refresh(api, oauth, tokens["refresh_token"])

    assert response.status_code == 200
    assert response.json()["scope"] == "continuity:read"


def test_it_ends_a_family_thirty_days_after_it_began(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha)
    first = RefreshToken.objects.get()
    # A family in constant use: rotated yesterday, begun 30 days ago.
    RefreshToken.objects.filter(pk=first.pk).update(
        family_started=timezone.now() - timedelta(days=30, seconds=1)
    )

    response = refresh(api, oauth, tokens["refresh_token"])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    event = last_event("oauth_token_refresh")
    assert (event.outcome, event.error_code) == ("rejected", "refresh_family_expired")


def test_it_keeps_a_family_alive_just_inside_thirty_days(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha)
    RefreshToken.objects.update(family_started=timezone.now() - timedelta(days=29, hours=23))
    assert refresh(api, oauth, tokens["refresh_token"]).status_code == 200


def test_it_refuses_a_refresh_once_the_membership_is_gone(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.contributor), oauth, world.alpha)
    # Deleted behind the services' back: the token endpoint re-checks the membership itself.
    Membership.objects.filter(project=world.alpha, user=world.contributor).delete()

    response = refresh(api, oauth, tokens["refresh_token"])

    assert response.json()["error"] == "invalid_grant"
    event = last_event("oauth_token_refresh")
    assert (event.outcome, event.error_code) == ("rejected", "not_a_member")
