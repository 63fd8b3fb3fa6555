"""RFC 7592 client management and the model's own redirect rules (the admin and DCR's PUT
reach Application.clean(), not the registration view's early check)."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from identity.models import Application
from tests.identity.flows import register


def management(api: Client, client_id: str, token: str, method: str = "get", body=None):
    call = getattr(api, method)
    headers = {"Authorization": f"Bearer {token}"}
    if body is None:
        return call(f"/oauth/register/{client_id}/", headers=headers)
    data = json.dumps(body)
    return call(f"/oauth/register/{client_id}/", data, "application/json", headers=headers)


def test_it_lets_a_client_read_its_registration(api: Client):
    oauth = register(api)
    token = oauth.registration["registration_access_token"]
    response = management(api, oauth.client_id, token)
    assert response.status_code == 200
    assert response.json()["client_id"] == oauth.client_id


def test_it_refuses_an_unsafe_redirect_on_update(api: Client):
    oauth = register(api)
    token = oauth.registration["registration_access_token"]
    response = management(
        api,
        oauth.client_id,
        token,
        "put",
        {"client_id": oauth.client_id, "redirect_uris": ["javascript:alert(1)"]},
    )
    assert response.status_code == 400
    assert Application.objects.get().redirect_uris == oauth.redirect_uri


def test_it_refuses_management_without_the_registration_token(api: Client):
    oauth = register(api)
    assert management(api, oauth.client_id, "wrong").status_code == 401


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "javascript:alert(1)",
        "data:text/html,x",
        "https://*.example.com/cb",
        "http://client.example/cb",
        "https://client.example/cb#x",
        "https://user@client.example/cb",
    ],
)
def test_it_refuses_unsafe_redirect_uris_in_the_model_itself(db, redirect_uri: str):
    application = Application(
        name="x",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect_uri,
    )
    with pytest.raises(ValidationError) as error:
        application.full_clean()
    assert "redirect_uris" in error.value.message_dict


def test_it_refuses_other_grant_types_in_the_model_itself(db):
    application = Application(
        name="x",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        redirect_uris="https://client.example/cb",
    )
    with pytest.raises(ValidationError) as error:
        application.full_clean()
    assert "authorization_grant_type" in error.value.message_dict


def test_it_refuses_to_turn_a_public_client_confidential_without_a_secret(api: Client):
    oauth = register(api)  # public: it holds no secret at all
    token = oauth.registration["registration_access_token"]
    response = management(
        api,
        oauth.client_id,
        token,
        "put",
        {
            "redirect_uris": [oauth.redirect_uri],
            "token_endpoint_auth_method": "client_secret_basic",
        },
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert Application.objects.get(client_id=oauth.client_id).client_type == "public"
