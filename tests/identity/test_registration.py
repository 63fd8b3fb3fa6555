"""RFC 7591 dynamic registration: open to anonymous clients, rate limited, strict redirects."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.hashers import check_password
from django.test import Client, override_settings

from audit.models import AnonymousRejection, AuditEvent
from identity import registration
from identity.models import Application
from tests.identity.flows import last_event, register, register_raw


def test_it_registers_a_public_client_without_a_secret(api: Client):
    response = register_raw(
        api,
        {
            "client_name": "Claude",
            "redirect_uris": ["http://localhost:33418/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert response.status_code == 201
    data = response.json()
    assert data["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in data
    assert data["grant_types"] == ["authorization_code", "refresh_token"]
    assert response["Cache-Control"] == "no-store"
    application = Application.objects.get(client_id=data["client_id"])
    assert application.client_type == Application.CLIENT_PUBLIC
    # No secret at all: nothing generated, nothing hashed (a PBKDF2 hash costs a third of a
    # second of CPU, for a value no one would ever check).
    assert (application.client_secret, application.hash_client_secret) == ("", False)
    assert application.registration_source == "dcr"
    assert application.skip_authorization is False
    event = last_event("oauth_client_register")
    assert (event.outcome, event.client_id, event.target_id) == (
        "success",
        data["client_id"],
        data["client_id"],
    )


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_it_registers_a_confidential_client_and_keeps_only_a_hash_of_its_secret(
    api: Client, method: str
):
    oauth = register(api, auth_method=method)
    assert oauth.client_secret
    stored = Application.objects.get(client_id=oauth.client_id).client_secret
    assert oauth.client_secret not in stored
    assert check_password(oauth.client_secret, stored)  # a hash (the suite's fast hasher)
    # RFC 7591: the method asked for, and a secret's expiry (0: never).
    assert oauth.registration["token_endpoint_auth_method"] == method
    assert oauth.registration["client_secret_expires_at"] == 0
    assert oauth.registration["client_id_issued_at"] > 0


def test_it_hashes_a_confidential_secret_before_touching_the_database(
    db: None, django_assert_num_queries
):
    body = json.dumps(
        {
            "redirect_uris": ["https://client.example/cb"],
            "token_endpoint_auth_method": "client_secret_basic",
        }
    ).encode()
    with django_assert_num_queries(0):
        prepared = registration.prepare(body)
    assert prepared.secret
    assert check_password(prepared.secret, prepared.application.client_secret)
    assert prepared.application.pk is None


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "javascript:alert(document.cookie)",
        "data:text/html,<script>alert(1)</script>",
        "https://*.example.com/callback",
        "https://client.example/*",
        "http://client.example/callback",
        "http://localhost.evil.example/callback",
        "http://127.0.0.2/callback",
        "https://client.example/callback#fragment",
        "https://client.example/callback#",
        "https://user:pass@client.example/callback",
        "https://attacker@client.example/callback",
        "com.example.app:/callback",
        "https:///callback",
        "/relative/callback",
    ],
)
def test_it_refuses_unsafe_redirect_uris(api: Client, redirect_uri: str):
    before = Application.objects.count()
    response = register_raw(api, {"client_name": "x", "redirect_uris": [redirect_uri]})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
    assert Application.objects.count() == before
    event = last_event("oauth_client_register")
    assert (event.outcome, event.error_code, event.client_id) == (
        "rejected",
        "invalid_redirect_uri",
        "",
    )


def test_it_refuses_a_safe_uri_listed_beside_an_unsafe_one(api: Client):
    response = register_raw(
        api, {"redirect_uris": ["https://client.example/cb", "javascript:alert(1)"]}
    )
    assert response.status_code == 400
    assert Application.objects.count() == 0


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://client.example/callback",
        "https://client.example/oauth/callback?tenant=7",
        "http://localhost:33418/callback",
        "http://localhost/callback",
        "http://127.0.0.1:5555/callback",
        "http://[::1]:7777/callback",
    ],
)
def test_it_accepts_https_and_loopback_http(api: Client, redirect_uri: str):
    assert register(api, redirect_uris=[redirect_uri]).redirect_uri == redirect_uri


@pytest.mark.parametrize("grant", ["password", "client_credentials", "implicit"])
def test_it_refuses_grant_types_other_than_the_code(api: Client, grant: str):
    response = register_raw(
        api, {"redirect_uris": ["https://client.example/cb"], "grant_types": [grant]}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert Application.objects.count() == 0
    assert last_event("oauth_client_register").error_code == "invalid_client_metadata"


def test_it_refuses_a_body_that_is_not_json(api: Client):
    response = api.post("/oauth/register/", data="not json", content_type="application/json")
    assert response.status_code == 400
    assert last_event("oauth_client_register").outcome == "rejected"


@override_settings(HEYAIRA_DCR_RATE_LIMIT_PER_HOUR=2)
def test_it_rate_limits_registrations_per_source_address(api: Client):
    register(api, address="192.0.2.10")
    register(api, address="192.0.2.10")
    refused = [register_raw(api, {"redirect_uris": ["https://c.example/cb"]}, address="192.0.2.10")]
    refused.append(
        register_raw(api, {"redirect_uris": ["https://c.example/cb"]}, address="192.0.2.10")
    )

    for response in refused:
        assert response.status_code == 429
        assert response.json()["error"] == "rate_limited"
        assert 0 < int(response["Retry-After"]) <= 3600
    assert Application.objects.count() == 2
    # Another address is not affected.
    register(api, address="192.0.2.11")
    # A flood of refusals is one audit row, not one per request, and no database work each.
    rows = AuditEvent.objects.filter(operation="oauth_client_register", error_code="rate_limited")
    assert rows.count() == 1
    assert rows.get().outcome == "rejected"
    assert not AnonymousRejection.objects.exists()
