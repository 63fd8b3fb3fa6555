"""PKCE: S256 only, required, and refused before the consent page when plain or missing."""

from __future__ import annotations

import pytest
from django.test import Client

from identity.models import Grant
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    Authorization,
    approve,
    consent_page,
    exchange,
    issued_tokens,
    last_event,
    redirect_params,
    register,
)


@pytest.mark.parametrize(
    ("challenge", "method", "code"),
    [
        ("plain-challenge-value-plain-challenge-value-1234", "plain", "pkce_method_refused"),
        ("no-method-given-means-plain-to-oauthlib-0123456789", None, "pkce_method_refused"),
        ("", None, "pkce_missing"),
        ("", "S256", "pkce_missing"),
    ],
)
@pytest.mark.parametrize("who", ["signed_in", "anonymous"])
def test_it_refuses_plain_or_missing_pkce_before_consent(
    world: World, api: Client, who: str, challenge: str, method: str | None, code: str
):
    oauth = register(api)
    browser = signed_in(world.owner) if who == "signed_in" else Client()
    auth = Authorization(oauth, challenge=challenge, method=method, verifier="unused")

    response = consent_page(browser, auth)

    # Straight back to the client with the error: no consent page, no sign-in page.
    assert response.status_code == 302
    assert response["Location"].startswith(oauth.redirect_uri)
    params = redirect_params(response)
    assert params["error"] == "invalid_request"
    assert params["state"] == auth.state
    assert params["iss"] == "http://testserver"
    assert not Grant.objects.exists()
    event = last_event("oauth_authorize")
    assert (event.outcome, event.error_code, event.client_id) == ("rejected", code, oauth.client_id)


def test_it_refuses_a_wrong_verifier_and_issues_nothing(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    params = approve(signed_in(world.owner), auth, world.alpha)

    response = exchange(api, auth, params["code"], verifier="x" * 64)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert not issued_tokens().exists()
    event = last_event("oauth_code_exchange")
    assert (event.outcome, event.error_code) == ("rejected", "pkce_verifier_mismatch")
    assert (event.project_id, event.user_id, event.client_id) == (
        world.alpha.pk,
        world.owner.pk,
        oauth.client_id,
    )


def test_it_refuses_an_exchange_without_a_verifier(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    params = approve(signed_in(world.owner), auth, world.alpha)

    response = exchange(api, auth, params["code"], omit_verifier=True)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert not issued_tokens().exists()
    assert last_event("oauth_code_exchange").outcome == "rejected"


def test_it_stores_only_s256_challenges(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    approve(signed_in(world.owner), auth, world.alpha)
    grant = Grant.objects.get()
    assert (grant.code_challenge_method, grant.code_challenge) == ("S256", auth.challenge)
