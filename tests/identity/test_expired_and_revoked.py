"""Expired and revoked access tokens get 401 invalid_token, audited."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.utils import timezone

from identity.models import AccessToken
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import API, bearer, last_event, refresh, register, tokens_for


def test_it_refuses_an_expired_token(world: World, api: Client):
    tokens = tokens_for(signed_in(world.owner), register(api), world.alpha, resource=API)
    AccessToken.objects.filter(project__isnull=False).update(
        expires=timezone.now() - timedelta(seconds=1)
    )

    response = api.get("/api/v1/identity", headers=bearer(tokens["access_token"]))

    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert "expired" in response["WWW-Authenticate"]
    event = last_event("authenticate")
    assert (event.outcome, event.error_code, event.project_id) == (
        "rejected",
        "token_expired",
        world.alpha.pk,
    )


def test_it_issues_access_tokens_for_fifteen_minutes(world: World, api: Client):
    tokens = tokens_for(signed_in(world.owner), register(api), world.alpha)
    assert tokens["expires_in"] == 900
    row = AccessToken.objects.get(project__isnull=False)
    assert timedelta(minutes=14) < row.expires - timezone.now() <= timedelta(minutes=15)


def test_it_refuses_a_token_revoked_at_the_revocation_endpoint(world: World, api: Client):
    oauth = register(api)
    tokens = tokens_for(signed_in(world.owner), oauth, world.alpha, resource=API)

    revoked = api.post(
        "/oauth/revoke/",
        {"token": tokens["access_token"], "client_id": oauth.client_id},
    )

    assert revoked.status_code == 200
    response = api.get("/api/v1/identity", headers=bearer(tokens["access_token"]))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert last_event("authenticate").error_code == "invalid_token"
    # Revoking the access token revoked the refresh token bound to it.
    assert refresh(api, oauth, tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_it_does_not_let_one_client_revoke_another_clients_token(world: World, api: Client):
    owner_client = register(api)
    other = register(api)
    tokens = tokens_for(signed_in(world.owner), owner_client, world.alpha, resource=API)
    api.post("/oauth/revoke/", {"token": tokens["access_token"], "client_id": other.client_id})
    assert api.get("/api/v1/identity", headers=bearer(tokens["access_token"])).status_code == 200
