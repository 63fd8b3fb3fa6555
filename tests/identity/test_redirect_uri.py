"""Redirect URIs match exactly what was registered (loopback ports aside, RFC 8252)."""

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
    last_event,
    register,
)

REGISTERED = "https://client.example/cb"


@pytest.mark.parametrize(
    "requested",
    [
        "https://client.example/cb2",  # path
        "https://client.example/other/cb",  # path
        "https://client.example/cb?x=1",  # query
        "https://client.example/cb/",  # trailing slash
        "http://client.example/cb",  # scheme
        "https://user@client.example/cb",  # user info
        "https://client.example/cb#frag",  # fragment
        "https://client.example:8443/cb",  # port
        "https://evil.example/cb",  # host
    ],
)
def test_it_refuses_a_redirect_uri_that_is_not_exactly_registered(
    world: World, api: Client, requested: str
):
    oauth = register(api, redirect_uris=[REGISTERED])
    auth = Authorization(oauth, redirect_uri=requested)

    response = consent_page(signed_in(world.owner), auth)

    # Never redirect to an unverified address: an error page, no Location, no consent form.
    assert response.status_code == 400
    assert not response.has_header("Location")
    assert b"cannot continue" in response.content
    assert b"Allow" not in response.content
    assert not Grant.objects.exists()
    event = last_event("oauth_authorize")
    assert (event.outcome, event.client_id) == ("rejected", oauth.client_id)
    assert event.error_code in {"redirect_uri_mismatch", "invalid_redirect_uri"}


def test_it_accepts_any_port_for_a_loopback_redirect(world: World, api: Client):
    oauth = register(api, redirect_uris=["http://127.0.0.1:8765/callback"])
    auth = Authorization(oauth, redirect_uri="http://127.0.0.1:50123/callback")
    params = approve(signed_in(world.owner), auth, world.alpha)
    assert params["state"] == auth.state
    assert exchange(api, auth, params["code"]).status_code == 200


def test_it_does_not_treat_loopback_hosts_as_interchangeable(world: World, api: Client):
    oauth = register(api, redirect_uris=["http://127.0.0.1:8765/callback"])
    auth = Authorization(oauth, redirect_uri="http://localhost:8765/callback")
    assert consent_page(signed_in(world.owner), auth).status_code == 400


def test_it_refuses_an_exchange_naming_another_redirect_uri(world: World, api: Client):
    oauth = register(api, redirect_uris=[REGISTERED, "https://client.example/other"])
    auth = Authorization(oauth)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]

    response = exchange(api, auth, code, redirect_uri="https://client.example/other")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    event = last_event("oauth_code_exchange")
    assert (event.outcome, event.error_code) == ("rejected", "invalid_request")
