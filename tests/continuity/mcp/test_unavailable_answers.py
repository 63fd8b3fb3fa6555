"""The JSON-RPC answer /mcp gives when the database cannot authenticate a request: a tool error
result for tools/call (shaped for the client's protocol era), a server-range JSON-RPC error with
data.code "unavailable" for anything else, id null when the request has no usable id."""

from __future__ import annotations

import json
from typing import Any

import mcp_types
import pytest

from continuity.mcp.unavailable import unavailable_answer
from core.errors import Unavailable


def _answer(message: Any, version: str | None = "2025-11-25") -> dict[str, Any]:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return dict(json.loads(unavailable_answer(body, version, Unavailable(retry_after=2))))


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25", "2026-07-28", None, "bogus"])
def test_a_tool_call_gets_a_tool_error_with_its_id(version: str | None) -> None:
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "task_get"}}
    answer = _answer(call, version)
    assert answer["id"] == 7
    result = answer["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "unavailable"
    assert result["structuredContent"]["error"]["retry_after"] == 2
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    known = version if version in mcp_types.version.KNOWN_PROTOCOL_VERSIONS else "2025-11-25"
    mcp_types.methods.validate_server_result("tools/call", known, result)


def test_another_method_gets_a_server_range_error_with_the_pinned_code() -> None:
    answer = _answer({"jsonrpc": "2.0", "id": "a", "method": "tools/list"})
    assert answer["id"] == "a"
    assert -32099 <= answer["error"]["code"] <= -32000
    assert answer["error"]["code"] not in (-32603, -32002)
    assert answer["error"]["data"] == {
        "code": "unavailable",
        "message": answer["error"]["message"],
        "retry_after": 2,
    }


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"[1, 2]", b'{"id": true, "method": "ping"}', b'{"method": "x"}', b"\xff"],
)
def test_a_request_without_a_usable_id_gets_id_null(body: bytes) -> None:
    answer = _answer(body)
    assert answer["id"] is None
    assert answer["error"]["data"]["code"] == "unavailable"
