"""A client that identifies itself by a client ID metadata document, end to end: the official
Python SDK's OAuthClientProvider with `client_metadata_url` (the TypeScript SDK's
`clientMetadataUrl` does the same; the Python one runs in-process here), a person in Chromium,
and the server fetching the document from a real HTTPS server on 127.0.0.1.

The server trusts the test's CA through HEYAIRA_CIMD_CA_BUNDLE and may fetch from 127.0.0.1
because HEYAIRA_CIMD_PRIVATE_HOSTS names it, the two settings an operator would use for an
internal client registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from tests.browser import async_browser_context
from tests.continuity.mcp.harness import data
from tests.identity.chromium_consent import ChromiumPerson, loopback_callback
from tests.identity.cimd_server import CertificateAuthority, DocumentServer, document_server
from tests.live import LiveServer, MemoryTokenStorage, start_live_server, stop_live_server

pytestmark = pytest.mark.live_server

PASSWORD = "correct-horse-battery-staple-42"
CLIENT_NAME = "Documented MCP client"


@pytest.fixture
def docs_and_server(
    docs_ca: CertificateAuthority, tmp_path: Path
) -> Iterator[tuple[DocumentServer, LiveServer]]:
    env = {"HEYAIRA_CIMD_CA_BUNDLE": str(docs_ca.bundle), "HEYAIRA_CIMD_PRIVATE_HOSTS": "127.0.0.1"}
    with document_server(docs_ca) as docs:
        server, pg_name = start_live_server(tmp_path, extra_env=env)
        try:
            yield docs, server
        finally:
            stop_live_server(server, pg_name)


async def sign_in_and_work(server: LiveServer, docs: DocumentServer) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with loopback_callback() as callback:
        client_id = docs.document(
            "/clients/mcp.json", callback.redirect_uri, client_name=CLIENT_NAME
        )
        async with async_browser_context() as context:
            person = ChromiumPerson(
                page=await context.new_page(),
                callback=callback,
                username="olivia",
                password=PASSWORD,
                project_label="Alpha (alpha, you are owner)",
            )
            provider = OAuthClientProvider(
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
                client_metadata_url=client_id,
            )
            async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
                transport = streamable_http_client(server.mcp_url, http_client=http)
                async with Client(transport) as client:
                    identity = data(await client.call_tool("server_identity", {}))
                    note = await client.call_tool(
                        "memory_add",
                        {
                            "write_context": identity["write_context"],
                            "kind": "note",
                            "content": "Signed in by a client ID metadata document.",
                        },
                    )
                    seen.update(identity=identity, note=data(note), client_id=client_id)
            seen["consent_html"] = person.consent_html
            seen["answers"] = person.answers
            seen["arrivals"] = [arrival.query for arrival in callback.redirects]
    return seen


def test_a_documented_client_signs_in_through_chromium_and_adds_a_memory(
    docs_and_server: tuple[DocumentServer, LiveServer],
):
    docs, server = docs_and_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")

    seen = anyio.run(sign_in_and_work, server, docs)

    client_id = seen["client_id"]
    assert seen["identity"]["project"]["slug"] == "alpha"
    assert seen["identity"]["principal"]["credential"] == "oauth_token"
    assert seen["note"]["kind"] == "note"
    # The consent page named the app and, plainly, where it is published.
    (consent,) = seen["consent_html"]
    assert f"This app identifies itself as <strong>{CLIENT_NAME}</strong>" in consent
    assert f"published at <strong>127.0.0.1:{docs.port}</strong>." in consent
    assert seen["answers"] == [("/accounts/login/", 302), ("/oauth/authorize/", 302)]
    (arrival,) = seen["arrivals"]
    assert set(arrival) == {"code", "state", "iss"}
    # The document was fetched by the server (once, then cached); nothing was registered.
    assert docs.fetched("/clients/mcp.json") == 1
    stored = server.run_python(
        """
from audit.models import AuditEvent
from continuity.models import Memory
from identity.models import Application
result = {
    "clients": [[a.client_id, a.registration_source, a.client_type, a.name, a.client_secret,
                 a.first_token_at is not None] for a in Application.objects.all()],
    "registered": [[e.outcome, e.target_type, e.target_id] for e in
                   AuditEvent.objects.filter(operation="oauth_client_register")],
    "memories": [m.content for m in Memory.objects.all()],
}
"""
    )
    assert stored["clients"] == [[client_id, "cimd", "public", CLIENT_NAME, "", True]]
    assert stored["registered"] == [["success", "cimd_client", client_id]]
    assert stored["memories"] == ["Signed in by a client ID metadata document."]
