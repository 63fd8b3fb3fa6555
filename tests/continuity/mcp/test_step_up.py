"""One step-up rule for both transports (core.stepup): a credential whose role allows an
operation but whose scopes do not gets the same 403 challenge on MCP and on REST, and exactly one
audit row, whichever way it came."""

from __future__ import annotations

import re
import uuid
from typing import Any

from django.test import Client

from audit.models import AuditEvent
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.continuity.mcp.inprocess import in_process_server
from tests.factories import build_world

MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def scope_of(challenge: str) -> str:
    match = re.search(r'scope="([^"]*)"', challenge)
    assert match, challenge
    return match.group(1)


def audit_key() -> tuple[str, Any]:
    """An owner's key that holds audit:read only: server_identity needs continuity:read."""
    world = build_world()
    issued = api_key_create(
        operator_caller(world.alpha), user_id=world.owner.pk, label="k", scopes=["audit:read"]
    )
    return issued.secret, world


def rows(request_id: str) -> list[tuple[str, str, str, str, str]]:
    return [
        (e.operation, e.outcome, e.error_code, e.target_type, e.target_id)
        for e in AuditEvent.objects.filter(request_id=request_id)
    ]


WRITE_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "memory_add", "arguments": {"kind": "note", "content": "x"}},
}


def read_only_key(world: Any, user: Any) -> str:
    """A project API key of `user` in alpha that holds continuity:read alone."""
    return api_key_create(
        operator_caller(world.alpha), user_id=user.pk, label="ro", scopes=["continuity:read"]
    ).secret


def test_mcp_and_rest_answer_a_scope_shortfall_alike_and_audit_it_once(transactional_db):
    secret, _ = audit_key()
    mcp_request, rest_request = uuid.uuid4().hex, uuid.uuid4().hex
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "server_identity", "arguments": {}},
    }
    with in_process_server() as server:
        mcp = server.post(
            call,
            {**MCP_HEADERS, "Authorization": f"Bearer {secret}", "X-Request-ID": mcp_request},
        )
    rest = Client().get(
        "/api/v1/identity",
        headers={"Authorization": f"Bearer {secret}", "X-Request-ID": rest_request},
    )

    assert (mcp.status_code, rest.status_code) == (403, 403)
    mcp_challenge, rest_challenge = mcp.headers["www-authenticate"], rest["WWW-Authenticate"]
    for challenge in (mcp_challenge, rest_challenge):
        assert 'error="insufficient_scope"' in challenge
        # What the credential holds plus what the operation needs.
        assert scope_of(challenge) == "audit:read continuity:read"
    assert "oauth-protected-resource/mcp" in mcp_challenge
    assert "oauth-protected-resource/api" in rest_challenge
    assert mcp.json() == rest.json()
    assert mcp.json()["error"] == {
        "code": "forbidden",
        "message": "This credential lacks the continuity:read scope.",
        "required_scopes": ["continuity:read"],
    }
    expected = [("server_identity", "rejected", "forbidden", "scope", "continuity:read")]
    assert rows(mcp_request) == expected
    assert rows(rest_request) == expected


def test_a_write_with_a_read_only_key_is_a_step_up_audited_once_on_mcp(transactional_db):
    world = build_world()
    secret = read_only_key(world, world.owner)
    request_id = uuid.uuid4().hex
    with in_process_server() as server:
        answer = server.post(
            WRITE_CALL,
            {**MCP_HEADERS, "Authorization": f"Bearer {secret}", "X-Request-ID": request_id},
        )
    assert answer.status_code == 403
    assert scope_of(answer.headers["www-authenticate"]) == "continuity:read continuity:write"
    assert answer.json()["error"]["required_scopes"] == ["continuity:write"]
    expected = [("memory_add", "rejected", "forbidden", "scope", "continuity:write")]
    assert rows(request_id) == expected


def test_a_role_that_does_not_allow_the_tool_is_no_step_up(transactional_db):
    """A viewer's key with every scope a viewer may hold: writing is refused as a tool error,
    not a challenge (no scope would let the role write)."""
    world = build_world()
    secret = read_only_key(world, world.viewer)
    with in_process_server() as server:
        answer = server.post(WRITE_CALL, {**MCP_HEADERS, "Authorization": f"Bearer {secret}"})
    assert answer.status_code == 200
    result = answer.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "forbidden"
