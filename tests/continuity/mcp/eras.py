"""Raw JSON-RPC over HTTP to /mcp in either protocol era: a handshake revision (2025-11-25,
no `initialize` needed in stateless mode) or 2026-07-28 (per-request `_meta` and headers)."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from tests.continuity.mcp.harness import McpWorld

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ERAS = (LEGACY, MODERN)
ACCEPT = "application/json, text/event-stream"


def send(
    world: McpWorld, era: str, method: str, params: dict[str, Any], who: str = "olivia"
) -> httpx2.Response:
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": era,
        **world.key_headers(who),
    }
    if era == MODERN:
        params = {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "schema-test", "version": "1"},
            },
        }
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx2.post(
        world.server.mcp_url, content=json.dumps(message), headers=headers, timeout=30
    )


def tool_list(world: McpWorld, era: str) -> dict[str, dict[str, Any]]:
    response = send(world, era, "tools/list", {})
    assert response.status_code == 200, response.text
    return {tool["name"]: tool for tool in response.json()["result"]["tools"]}
