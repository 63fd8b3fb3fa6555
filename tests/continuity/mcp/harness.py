"""A live server with people, keys and MCP sessions, shared by the MCP tests of one module."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp_types import CallToolResult

from tests.live import ConsentBrowser, LiveServer, MemoryTokenStorage

PASSWORD = "correct-horse-battery-staple-42"
MODES = ("legacy", "auto")
# The pinned tools, in the order tools/list gives them.
EVERY_TOOL = (
    "server_identity",
    "continuity_context",
    "memory_get",
    "memory_search",
    "task_get",
    "task_list",
    "state_get",
    "memory_add",
    "task_create",
    "task_update",
    "task_claim_next",
    "task_heartbeat",
    "state_put",
)


@dataclass
class McpWorld:
    """alpha: olivia (owner), victor (viewer); beta: oscar (owner). One API key each."""

    server: LiveServer
    keys: dict[str, str] = field(default_factory=dict)
    providers: dict[str, OAuthClientProvider] = field(default_factory=dict)

    def oauth(self, username: str = "olivia", project: str = "alpha") -> OAuthClientProvider:
        """One OAuth client per person and project; its token is reused across tests."""
        name = f"{username}@{project}"
        if name not in self.providers:
            browser = ConsentBrowser(username=username, password=PASSWORD, project_slug=project)
            self.providers[name] = OAuthClientProvider(
                server_url=self.server.mcp_url,
                client_metadata=OAuthClientMetadata(
                    client_name=f"MCP test client {name}",
                    redirect_uris=["http://127.0.0.1:33418/callback"],
                    grant_types=["authorization_code", "refresh_token"],
                    token_endpoint_auth_method="none",
                ),
                storage=MemoryTokenStorage(),
                redirect_handler=browser.redirect_handler,
                callback_handler=browser.callback_handler,
            )
        return self.providers[name]

    def key_headers(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[who]}"}

    def audit_rows(self, where: str = "True") -> list[dict[str, Any]]:
        return list(
            self.server.run_python(
                f"""
from audit.models import AuditEvent
from projects.models import Project
slugs = dict(Project.objects.values_list("pk", "slug"))
result = [
    {{"operation": e.operation, "outcome": e.outcome, "error_code": e.error_code,
      "request_id": e.request_id, "actor_label": e.actor_label, "target_id": e.target_id,
      "project": slugs.get(e.project_id, ""), "credential_kind": e.credential_kind}}
    for e in AuditEvent.objects.order_by("occurred_at") if {where}
]
"""
            )
        )


def build_world(server: LiveServer) -> McpWorld:
    world = McpWorld(server=server)
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.add_person("victor", PASSWORD, "alpha", "viewer")
    server.add_person("oscar", PASSWORD, "beta", "owner")
    server.run_python(
        """
from projects.callers import operator_caller
from projects.models import Project
from projects.services import repository_bind
repository_bind(operator_caller(Project.objects.get(slug="alpha")), provider="github",
                owner="acme", name="app", url="https://github.com/acme/app")
"""
    )
    for who, project in (("olivia", "alpha"), ("victor", "alpha"), ("oscar", "beta")):
        world.keys[who] = (
            server.manage("create_api_key", project, "--user", who).strip().splitlines()[-1]
        )
    return world


@asynccontextmanager
async def session(
    world: McpWorld,
    mode: str,
    *,
    auth: OAuthClientProvider | None = None,
    headers: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    """An MCP session with the official SDK client over real HTTP."""
    async with httpx2.AsyncClient(auth=auth, headers=headers or {}, timeout=30) as http:
        transport = streamable_http_client(world.server.mcp_url, http_client=http)
        async with Client(transport, mode=mode) as client:
            yield client


def data(result: CallToolResult) -> dict[str, Any]:
    """The structured result, checked against its text copy."""
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return dict(result.structured_content)


def error_code(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    return str(data(result)["error"]["code"])
