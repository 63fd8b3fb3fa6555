"""The answer to an MCP request that could not be authenticated because the database is briefly
unavailable: still a JSON-RPC answer (never an HTTP 5xx, never -32603), so that clients see the
retryable pinned code.

- tools/call: a tool error result with the request's id, as any tool failure;
- any other request: a JSON-RPC error in the implementation-defined server range with
  data {code: "unavailable", message, retry_after};
- a body without a usable id: the same error with id null.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import methods
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from continuity.mcp.calls import UNAVAILABLE_RPC_CODE, error_result
from core.errors import Unavailable


def unavailable_answer(body: bytes, protocol_version: str | None, error: Unavailable) -> bytes:
    message = _message(body)
    request_id = message.get("id")
    if not _usable_id(request_id):
        return _encode(_rpc_error(None, error))
    if message.get("method") == "tools/call":
        result = _tool_error(protocol_version, error)
        return _encode({"jsonrpc": "2.0", "id": request_id, "result": result})
    return _encode(_rpc_error(request_id, error))


def _tool_error(protocol_version: str | None, error: Unavailable) -> dict[str, Any]:
    version = protocol_version if protocol_version in KNOWN_PROTOCOL_VERSIONS else None
    data = error_result(error).model_dump(by_alias=True, mode="json", exclude_none=True)
    # Shaped for the client's protocol era (2026-07-28 results carry resultType, older do not).
    return methods.serialize_server_result("tools/call", version or LATEST_HANDSHAKE_VERSION, data)


def _rpc_error(request_id: Any, error: Unavailable) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": UNAVAILABLE_RPC_CODE, "message": error.message, "data": error.as_dict()},
    }


def _message(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    return message if isinstance(message, dict) else {}


def _usable_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
