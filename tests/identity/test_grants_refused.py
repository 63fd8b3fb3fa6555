"""Only the authorization code (with PKCE) and refresh grants exist: password, client
credentials and implicit are refused."""

from __future__ import annotations

from django.test import Client

from identity.models import Application, Grant
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    Authorization,
    issued_tokens,
    last_event,
    redirect_params,
    register,
)


def test_it_refuses_the_password_grant(world: World, api: Client):
    oauth = register(api, auth_method="client_secret_post")

    response = api.post(
        "/oauth/token/",
        {
            "grant_type": "password",
            "username": "olivia",
            "password": "pw-olivia-Xy7!",
            "client_id": oauth.client_id,
            "client_secret": oauth.client_secret,
        },
    )

    assert response.status_code == 400
    assert response.json()["error"] == "unsupported_grant_type"
    assert response["Cache-Control"] == "no-store"
    assert not issued_tokens().exists()
    event = last_event("oauth_token")
    assert (event.outcome, event.error_code, event.client_id) == (
        "rejected",
        "unsupported_grant_type",
        oauth.client_id,
    )


def test_it_refuses_the_password_grant_even_for_a_password_application(world: World, api: Client):
    oauth = register(api, auth_method="client_secret_post")
    # No registration path makes one; a row edited behind our back must still not work.
    Application.objects.filter(client_id=oauth.client_id).update(
        authorization_grant_type=Application.GRANT_PASSWORD
    )
    response = api.post(
        "/oauth/token/",
        {
            "grant_type": "password",
            "username": "olivia",
            "password": "pw-olivia-Xy7!",
            "client_id": oauth.client_id,
            "client_secret": oauth.client_secret,
        },
    )
    assert response.json()["error"] == "unsupported_grant_type"
    assert not issued_tokens().exists()


def test_it_refuses_the_client_credentials_grant(world: World, api: Client):
    oauth = register(api, auth_method="client_secret_post")
    response = api.post(
        "/oauth/token/",
        {
            "grant_type": "client_credentials",
            "client_id": oauth.client_id,
            "client_secret": oauth.client_secret,
        },
    )
    assert response.json()["error"] == "unsupported_grant_type"
    assert last_event("oauth_token").error_code == "unsupported_grant_type"


def test_it_refuses_the_implicit_grant_before_consent(world: World, api: Client):
    oauth = register(api)
    auth = Authorization(oauth, extra={"response_type": "token"})
    url = auth.url().replace("response_type=code&", "")

    response = signed_in(world.owner).get(url)

    assert response.status_code == 302
    params = redirect_params(response)
    assert params["error"] == "unsupported_response_type"
    assert "access_token" not in params
    assert not Grant.objects.exists()
    event = last_event("oauth_authorize")
    assert (event.outcome, event.error_code) == ("rejected", "unsupported_response_type")


def test_it_refuses_the_hybrid_code_token_response_type(world: World, api: Client):
    oauth = register(api)
    url = Authorization(oauth).url().replace("response_type=code", "response_type=code+token")
    response = signed_in(world.owner).get(url)
    assert response.status_code == 302
    assert "access_token" not in redirect_params(response)
