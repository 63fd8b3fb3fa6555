"""A token works only at the resource it was issued for: /api tokens at /mcp and the reverse."""

from __future__ import annotations

import pytest
from django.test import Client

from identity import authn
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import API, MCP, bearer, last_event, register, tokens_for


def test_it_refuses_an_mcp_token_at_the_api(world: World, api: Client):
    token = tokens_for(signed_in(world.owner), register(api), world.alpha, resource=MCP)

    response = api.get("/api/v1/identity", headers=bearer(token["access_token"]))

    assert response.status_code == 401
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith('Bearer error="invalid_token"')
    assert "another resource" in challenge
    event = last_event("authenticate")
    assert (event.outcome, event.error_code, event.resource) == (
        "rejected",
        "wrong_audience",
        API,
    )
    assert (event.project_id, event.user_id) == (world.alpha.pk, world.owner.pk)


def test_it_refuses_an_api_token_at_the_mcp_endpoint(world: World, api: Client):
    token = tokens_for(signed_in(world.owner), register(api), world.alpha, resource=API)

    with pytest.raises(authn.AuthenticationFailed) as failure:
        authn.authenticate(f"Bearer {token['access_token']}", resource="mcp", request_id="r")

    assert failure.value.status == 401
    assert 'error="invalid_token"' in failure.value.www_authenticate
    assert "oauth-protected-resource/mcp" in failure.value.www_authenticate
    assert failure.value.error.code == "unauthenticated"
    event = last_event("authenticate")
    assert (event.error_code, event.resource) == ("wrong_audience", MCP)


def test_it_accepts_each_token_at_its_own_resource(world: World, api: Client):
    browser = signed_in(world.owner)
    oauth = register(api)
    mcp_token = tokens_for(browser, oauth, world.alpha, resource=MCP)["access_token"]
    api_token = tokens_for(browser, oauth, world.alpha, resource=API)["access_token"]
    assert authn.authenticate(f"Bearer {mcp_token}", resource="mcp", request_id="r").resource == MCP
    assert api.get("/api/v1/identity", headers=bearer(api_token)).status_code == 200


def test_it_refuses_a_token_without_project_or_audience(world: World, api: Client):
    """DCR's registration access token is such a row; DOT alone would accept it anywhere."""
    oauth = register(api)
    registration_token = oauth.registration["registration_access_token"]

    response = api.get("/api/v1/identity", headers=bearer(registration_token))

    assert response.status_code == 401
    assert last_event("authenticate").error_code == "token_unbound"


def test_it_refuses_unbound_tokens_in_dots_own_resource_check_too(world: World, api: Client):
    from oauthlib.common import Request

    from identity.validators import HeyAiraValidator

    oauth = register(api)
    request = Request(API)
    assert not HeyAiraValidator().validate_bearer_token(
        oauth.registration["registration_access_token"], [], request
    )
    assert request.oauth2_error["error"] == "invalid_token"
