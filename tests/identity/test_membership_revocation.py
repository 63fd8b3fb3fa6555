"""Removing a member or deactivating a user revokes their tokens and keys at once."""

from __future__ import annotations

from django.test import Client

from audit.models import AuditEvent
from core.access import Role
from identity.models import AccessToken, Grant, RefreshToken
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import ApiKey, Membership
from projects.services import membership_remove
from tests.factories import World, add_member
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    API,
    Authorization,
    OAuthClient,
    bearer,
    consent_page,
    consent_post_data,
    last_event,
    refresh,
    register,
    tokens_for,
)


def credentials_of(world: World, who: str, api: Client) -> tuple[dict, str, OAuthClient]:
    user = getattr(world, who)
    oauth = register(api)
    tokens = tokens_for(signed_in(user), oauth, world.alpha, resource=API)
    key = api_key_create(
        operator_caller(world.alpha), user_id=user.pk, label="k", scopes=["continuity:read"]
    )
    return tokens, key.secret, oauth


def test_it_revokes_tokens_and_keys_when_a_membership_ends(world: World, api: Client):
    tokens, secret, oauth = credentials_of(world, "contributor", api)
    # A code granted but not yet exchanged dies too.
    browser = signed_in(world.contributor)
    auth = Authorization(oauth)
    browser.post(auth.url(), consent_post_data(consent_page(browser, auth), project=world.alpha))
    membership = Membership.objects.get(project=world.alpha, user=world.contributor)
    caller = operator_caller(world.alpha, request_id="remove-carla")

    membership_remove(caller, membership_id=membership.pk)

    assert api.get("/api/v1/identity", headers=bearer(tokens["access_token"])).status_code == 401
    assert api.get("/api/v1/identity", headers=bearer(secret)).status_code == 401
    assert refresh(api, oauth, tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert not AccessToken.objects.filter(user=world.contributor).exists()
    assert not RefreshToken.objects.filter(user=world.contributor, revoked__isnull=True).exists()
    assert not Grant.objects.filter(user=world.contributor, redeemed_at__isnull=True).exists()
    assert ApiKey.objects.get(user=world.contributor).revoked_at is not None
    event = last_event("credentials_revoked")
    assert (event.outcome, event.error_code, event.project_id) == (
        "success",
        "membership_ended",
        world.alpha.pk,
    )
    assert (event.target_type, event.target_id, event.request_id) == (
        "user",
        str(world.contributor.pk),
        "remove-carla",
    )
    # The same request id ties it to the removal itself.
    assert AuditEvent.objects.filter(
        operation="membership_remove", request_id="remove-carla"
    ).exists()


def test_it_leaves_the_members_other_projects_alone(world: World, api: Client):
    add_member(world.beta, world.contributor, Role.CONTRIBUTOR)
    beta_tokens = tokens_for(signed_in(world.contributor), register(api), world.beta, resource=API)
    membership = Membership.objects.get(project=world.alpha, user=world.contributor)

    membership_remove(operator_caller(world.alpha), membership_id=membership.pk)

    response = api.get("/api/v1/identity", headers=bearer(beta_tokens["access_token"]))
    assert response.status_code == 200


def test_it_revokes_everything_when_a_user_is_deactivated(world: World, api: Client):
    add_member(world.beta, world.contributor, Role.VIEWER)
    tokens, secret, _oauth = credentials_of(world, "contributor", api)
    beta_tokens = tokens_for(signed_in(world.contributor), register(api), world.beta, resource=API)

    world.contributor.is_active = False
    world.contributor.save()

    for token in (tokens["access_token"], beta_tokens["access_token"], secret):
        assert api.get("/api/v1/identity", headers=bearer(token)).status_code == 401
    assert not AccessToken.objects.filter(user=world.contributor).exists()
    assert not RefreshToken.objects.filter(user=world.contributor, revoked__isnull=True).exists()
    assert ApiKey.objects.get(user=world.contributor).revoked_at is not None
    rows = AuditEvent.objects.filter(operation="credentials_revoked", error_code="user_deactivated")
    assert {row.project_id for row in rows} == {world.alpha.pk, world.beta.pk}
    # Saving the inactive user again changes nothing and records nothing more.
    world.contributor.save()
    assert AuditEvent.objects.filter(operation="credentials_revoked").count() == 2
