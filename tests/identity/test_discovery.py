"""RFC 8414 and RFC 9728 metadata: what clients read before anything else."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from tests.identity.flows import API, MCP

ISSUER = settings.HEYAIRA_PUBLIC_URL
PINNED_SCOPES = ["audit:read", "continuity:read", "continuity:write"]


def test_it_publishes_authorization_server_metadata_for_oauth_2_1(client: Client):
    response = client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    data = response.json()
    assert data["issuer"] == ISSUER
    assert data["authorization_endpoint"] == f"{ISSUER}/oauth/authorize/"
    assert data["token_endpoint"] == f"{ISSUER}/oauth/token/"
    assert data["revocation_endpoint"] == f"{ISSUER}/oauth/revoke/"
    assert data["registration_endpoint"] == f"{ISSUER}/oauth/register/"
    assert data["response_types_supported"] == ["code"]
    assert data["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert data["code_challenge_methods_supported"] == ["S256"]
    assert "none" in data["token_endpoint_auth_methods_supported"]
    assert data["authorization_response_iss_parameter_supported"] is True
    assert data["scopes_supported"] == PINNED_SCOPES
    assert "introspection_endpoint" not in data


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/.well-known/oauth-protected-resource", MCP),
        ("/.well-known/oauth-protected-resource/mcp", MCP),
        ("/.well-known/oauth-protected-resource/api", API),
    ],
)
def test_it_describes_each_protected_resource(client: Client, path: str, resource: str):
    response = client.get(path)
    assert response.status_code == 200
    data = response.json()
    assert data["resource"] == resource
    assert data["authorization_servers"] == [ISSUER]
    # byte for byte: what the client compares with the metadata's issuer
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert data["authorization_servers"][0] == metadata["issuer"]
    assert data["scopes_supported"] == PINNED_SCOPES
    assert data["bearer_methods_supported"] == ["header"]


def test_it_knows_no_other_protected_resource(client: Client):
    response = client.get("/.well-known/oauth-protected-resource/other")
    assert response.status_code == 404


def test_it_pins_the_resources_to_the_public_url():
    assert f"{ISSUER}/mcp" == MCP
    assert f"{ISSUER}/api" == API


def test_it_offers_exactly_the_pinned_scopes():
    from core.access import Scope

    scopes: dict[str, str] = settings.OAUTH2_PROVIDER["SCOPES"]  # type: ignore[assignment]
    assert sorted(scopes) == sorted(str(s) for s in Scope)
