"""OAuth end to end as people do it: the official MCP SDK client, and a person in Chromium.

The SDK's OAuthClientProvider does discovery, dynamic registration, PKCE S256 and `resource`;
its redirect_handler makes headless Chromium open the authorization URL, sign in at
/accounts/login/, pick the project on the consent page by its label and click Allow (or Deny).
The server then redirects the browser to the client's real loopback listener on 127.0.0.1,
whose query the callback_handler hands back to the SDK.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from tests.browser import async_browser_context
from tests.continuity.mcp.harness import data
from tests.identity.chromium_consent import (
    AuthorizationRefused,
    ChromiumPerson,
    LoopbackCallback,
    loopback_callback,
)
from tests.live import LiveServer, MemoryTokenStorage

pytestmark = pytest.mark.live_server

PASSWORD = "correct-horse-battery-staple-42"
CLIENT_NAME = "Chromium end-to-end client"


def provider_for(
    server: LiveServer, person: ChromiumPerson, callback: LoopbackCallback
) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=server.mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[callback.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryTokenStorage(),
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
    )


async def connect_and_work(
    server: LiveServer, *, allow: bool, project_label: str = ""
) -> tuple[ChromiumPerson, dict[str, Any]]:
    """Run the whole flow; returns the person and what the MCP session saw (or raised)."""
    seen: dict[str, Any] = {}
    with loopback_callback() as callback:
        async with async_browser_context() as context:
            person = ChromiumPerson(
                page=await context.new_page(),
                callback=callback,
                username="olivia",
                password=PASSWORD,
                project_label=project_label,
                allow=allow,
            )
            provider = provider_for(server, person, callback)
            try:
                async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
                    transport = streamable_http_client(server.mcp_url, http_client=http)
                    async with Client(transport) as client:
                        identity = data(await client.call_tool("server_identity", {}))
                        note = await client.call_tool(
                            "memory_add",
                            {
                                "write_context": identity["write_context"],
                                "kind": "note",
                                "content": "Connected from Chromium through OAuth.",
                            },
                        )
                        seen.update(identity=identity, note=data(note))
            except Exception as error:  # the SDK wraps it in exception groups
                seen["refused"] = refusal_in(error)
                if seen["refused"] is None:
                    raise
    return person, seen


def refusal_in(error: BaseException) -> AuthorizationRefused | None:
    if isinstance(error, AuthorizationRefused):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := refusal_in(inner)) is not None:
                return found
    if error.__cause__ is not None:
        return refusal_in(error.__cause__)
    return None


def tokens_of(server: LiveServer, username: str) -> dict[str, Any]:
    return dict(
        server.run_python(
            f"""
from identity.models import AccessToken, Grant, RefreshToken
result = {{
    "access": [[t.project.slug, t.scope, t.resource] for t in
               AccessToken.objects.filter(user__username={username!r}).select_related("project")],
    "refresh": RefreshToken.objects.filter(user__username={username!r}).count(),
    "grants": Grant.objects.filter(user__username={username!r}).count(),
}}
"""
        )
    )


def test_it_connects_the_sdk_through_chromium_and_calls_tools(asgi_server: LiveServer):
    server = asgi_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.add_person("oscar", PASSWORD, "beta", "owner")
    server.add_person("olivia", PASSWORD, "beta", "contributor")

    person, seen = anyio.run(
        lambda: connect_and_work(
            server, allow=True, project_label="Beta (beta, you are contributor)"
        )
    )

    assert "refused" not in seen
    identity = seen["identity"]
    assert identity["resource"] == server.mcp_url
    assert identity["project"]["slug"] == "beta"
    assert identity["principal"]["actor"] == "olivia"
    assert identity["principal"]["credential"] == "oauth_token"
    assert identity["principal"]["role"] == "contributor"
    assert seen["note"]["kind"] == "note"

    # The authorization request sent Chromium to sign in, with `next` leading back to it.
    (sign_in_url,) = person.sign_in_urls
    assert parse_qs(urlsplit(sign_in_url).query)["next"][0].startswith("/oauth/authorize/?")
    # The consent page offered both projects and said what the client asked for.
    consent = person.consent_html[0]
    assert CLIENT_NAME in consent
    assert "Alpha" in consent
    assert "Beta" in consent
    assert "Add memory, create and update tasks" in consent

    # Both POSTs (sign-in, Allow) carried this site's own origin and were redirected...
    assert person.answers == [("/accounts/login/", 302), ("/oauth/authorize/", 302)]
    assert {p.headers.get("origin") for p in person.posts} == {server.url}
    # ...and the redirect carrying the code reached the client with no Referer.
    (arrival,) = person.callback.redirects
    assert set(arrival.query) == {"code", "state", "iss"}
    assert arrival.query["iss"] == server.url
    assert "referer" not in arrival.headers

    tokens = tokens_of(server, "olivia")
    assert tokens["access"] == [["beta", "continuity:read continuity:write", [server.mcp_url]]]
    assert tokens["refresh"] == 1
    memory = server.run_python(
        """
from continuity.models import Memory
result = [[m.project.slug, m.content] for m in Memory.objects.select_related("project")]
"""
    )
    assert memory == [["beta", "Connected from Chromium through OAuth."]]


def test_it_gives_the_client_access_denied_and_no_token_on_deny(asgi_server: LiveServer):
    server = asgi_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")

    person, seen = anyio.run(lambda: connect_and_work(server, allow=False))

    assert CLIENT_NAME in person.consent_html[0]
    assert person.answers == [("/accounts/login/", 302), ("/oauth/authorize/", 302)]
    assert {p.headers.get("origin") for p in person.posts} == {server.url}
    refused = seen["refused"]
    assert refused.error == "access_denied"
    assert refused.arrival.query["iss"] == server.url
    assert "state" in refused.arrival.query
    assert "code" not in refused.arrival.query
    assert "identity" not in seen
    assert tokens_of(server, "olivia") == {"access": [], "refresh": 0, "grants": 0}
    consents = server.run_python(
        """
from audit.models import AuditEvent
result = [[e.outcome, e.error_code, e.actor_label]
          for e in AuditEvent.objects.filter(operation="oauth_consent")]
"""
    )
    assert consents == [["rejected", "access_denied", "olivia"]]
