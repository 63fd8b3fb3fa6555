"""RFC 8707: a token names exactly one audience, one of HeyAira's two resources."""

from __future__ import annotations

import pytest
from django.test import Client

from identity.models import AccessToken, Grant
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    API,
    MCP,
    Authorization,
    approve,
    consent_page,
    consent_post_data,
    exchange,
    last_event,
    redirect_params,
    register,
)


@pytest.mark.parametrize(
    "resource",
    [
        "https://evil.example/mcp",
        "http://testserver/mcp/",
        "http://testserver/",
        "http://testserver/api/v1",
        "urn:heyaira:mcp",
    ],
)
def test_it_refuses_an_unknown_resource_before_consent(world: World, api: Client, resource: str):
    oauth = register(api)
    auth = Authorization(oauth, resource=resource)

    response = consent_page(signed_in(world.owner), auth)

    assert response.status_code == 302
    params = redirect_params(response)
    assert params["error"] == "invalid_target"
    assert (params["state"], params["iss"]) == (auth.state, "http://testserver")
    assert not Grant.objects.exists()
    event = last_event("oauth_authorize")
    assert (event.outcome, event.error_code) == ("rejected", "invalid_target")


def test_it_refuses_two_resources_in_one_authorization(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth, extra={"resource": API})  # plus the MCP one
    response = consent_page(signed_in(world.owner), auth)
    assert redirect_params(response)["error"] == "invalid_target"


def test_it_gives_the_mcp_audience_when_no_resource_is_named(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth, resource=None)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]
    assert exchange(api, auth, code).status_code == 200
    assert Grant.objects.get().resource == [MCP]
    assert AccessToken.objects.get(project__isnull=False).resource == [MCP]


def test_it_binds_the_token_to_the_resource_the_grant_names(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth, resource=API)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]
    assert exchange(api, auth, code, resource=API).status_code == 200
    assert AccessToken.objects.get(project__isnull=False).resource == [API]


def test_it_refuses_an_exchange_naming_another_resource_and_keeps_the_code(
    world: World, api: Client
):
    oauth = register(api)
    auth = Authorization(oauth, resource=MCP)
    code = approve(signed_in(world.owner), auth, world.alpha)["code"]

    response = exchange(api, auth, code, resource=API)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    assert response.json()["error"] == "invalid_target"
    event = last_event("oauth_code_exchange")
    assert (event.outcome, event.error_code, event.project_id) == (
        "rejected",
        "invalid_target",
        world.alpha.pk,
    )
    # Nothing was consumed: the right request still succeeds.
    assert exchange(api, auth, code).status_code == 200


def test_it_refuses_a_tampered_resource_in_the_consent_form(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth)
    browser = signed_in(world.owner)
    page = consent_page(browser, auth)
    data = consent_post_data(page, project=world.alpha)
    data["resource"] = "https://evil.example/mcp"

    response = browser.post(auth.url(), data)

    assert response.status_code == 302
    assert redirect_params(response)["error"] == "invalid_target"
    assert not Grant.objects.exists()
