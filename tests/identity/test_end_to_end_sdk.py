"""End to end: the official MCP SDK's OAuthClientProvider against the running server.

Discovery (401 challenge -> protected-resource metadata -> authorization-server metadata),
dynamic registration, PKCE S256 and the `resource` parameter are all the SDK's; the test only
plays the person at the browser (sign-in, consent) over HTTP.
"""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata

from tests.live import ConsentBrowser, LiveServer, MemoryTokenStorage

pytestmark = pytest.mark.live_server

PASSWORD = "correct-horse-battery-staple-42"


def sdk_provider(server: LiveServer, browser: ConsentBrowser, target: str) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=target,
        client_metadata=OAuthClientMetadata(
            client_name="SDK end-to-end test",
            redirect_uris=["http://localhost:33418/callback"],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryTokenStorage(),
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )


def test_it_gets_a_token_through_the_sdk_and_reads_the_identity(asgi_server: LiveServer):
    server = asgi_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.add_person("olivia", PASSWORD, "beta", "owner")
    browser = ConsentBrowser(username="olivia", password=PASSWORD, project_slug="beta")
    identity_url = f"{server.url}/api/v1/identity"
    provider = sdk_provider(server, browser, identity_url)

    async def run() -> tuple[httpx2.Response, httpx2.Response]:
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            first = await http.get(identity_url)
            second = await http.get(identity_url)  # the stored token, no new authorization
        return first, second

    first, second = anyio.run(run)

    assert first.status_code == 200, first.text
    identity = first.json()
    assert identity["resource"] == server.api_url
    assert identity["instance"] == "live-test"
    assert identity["project"]["slug"] == "beta"
    assert identity["principal"] == {
        "actor": "olivia",
        "role": "owner",
        "scopes": ["continuity:read", "continuity:write"],  # what the challenge asked for
        "credential": "oauth_token",
    }
    assert identity["write_context"]["resource"] == server.api_url
    assert second.status_code == 200
    # One sign-in page and one consent page: the second call reused the token.
    assert len(browser.pages) == 2
    assert "SDK end-to-end test" in browser.pages[1]
    assert "localhost:33418" in browser.pages[1]
    assert browser.location.startswith("http://localhost:33418/callback?")
    assert f"iss={server.url.replace(':', '%3A').replace('/', '%2F')}" in browser.location

    rows = server.run_python(
        """
from audit.models import AuditEvent
from projects.models import Project
slugs = dict(Project.objects.values_list("pk", "slug"))
result = [[e.operation, e.outcome, e.actor_label, e.resource, slugs.get(e.project_id, "")]
          for e in AuditEvent.objects.order_by("occurred_at")
          if e.operation.startswith(("oauth_", "server_identity"))]
"""
    )
    assert ["oauth_client_register", "success", "", "", ""] in rows
    assert ["oauth_consent", "success", "olivia", server.api_url, "beta"] in rows
    assert ["oauth_code_exchange", "success", "olivia", server.api_url, "beta"] in rows
    assert ["server_identity", "success", "olivia", server.api_url, "beta"] in rows


def test_it_answers_discovery_as_the_sdk_expects(asgi_server: LiveServer):
    """The documents the SDK read above, checked byte for byte against the public URL."""
    server = asgi_server

    async def fetch(path: str) -> dict[str, object]:
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.get(server.url + path)
        assert response.status_code == 200
        return dict(json.loads(response.content))

    metadata = anyio.run(fetch, "/.well-known/oauth-authorization-server")
    api = anyio.run(fetch, "/.well-known/oauth-protected-resource/api")
    mcp = anyio.run(fetch, "/.well-known/oauth-protected-resource")
    assert metadata["issuer"] == server.url
    assert api["authorization_servers"] == [server.url]
    assert mcp["authorization_servers"] == [server.url]
    assert api["resource"] == server.api_url
    assert mcp["resource"] == server.mcp_url
