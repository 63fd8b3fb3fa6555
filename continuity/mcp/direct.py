"""A tools/call at a handshake-era revision, answered without the SDK's per-request session.

In stateless mode the SDK's session manager builds, for every POST, a transport, a task group,
memory streams, a JSON-RPC dispatcher, a connection and a runner, and passes the message through
all of them to reach the tool handler. For a tools/call that costs about as much event-loop time
as the rest of the request together (measured in the throughput bench: docs/scaling.md).

This module answers the common case, one tools/call request at a revision with the `initialize`
handshake, with the SDK's own pieces and nothing else: the request is validated by
`mcp_types.methods` against the revision's surface and typed as the SDK's handler gets it, the
handler is the same function (continuity.mcp.server.call_tool), and the result goes through
`serialize_server_result` and the SDK's JSON-RPC response model, dumped as the SDK's transport
dumps it. Anything else, and any request the SDK would refuse, still goes to the SDK, which
answers it its own way (tests/mcp/test_direct_calls.py holds the two to the same bytes).
"""

from __future__ import annotations

import mcp_types as types
import pydantic
from mcp_types import DEFAULT_NEGOTIATED_VERSION, methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from continuity.mcp import jsonrpc
from continuity.mcp.server import answer_tool_call, rpc_error

TOOLS_CALL = "tools/call"


class DirectCall:
    """A tools/call this module answers: its revision, id and typed params."""

    def __init__(
        self, version: str, request_id: str | int, params: types.CallToolRequestParams
    ) -> None:
        self.version = version
        self.request_id = request_id
        self.params = params

    async def answer(self) -> bytes:
        """The JSON-RPC response body, as the SDK's transport would write it."""
        try:
            result = await answer_tool_call(self.params)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            wire = methods.serialize_server_result(TOOLS_CALL, self.version, dumped)
            message: types.JSONRPCResponse | types.JSONRPCError = types.JSONRPCResponse(
                jsonrpc="2.0", id=self.request_id, result=wire
            )
        except Exception as error:
            # As on the SDK path (HideInternalErrors): no exception text reaches the client.
            failure = rpc_error(error)
            message = types.JSONRPCError(jsonrpc="2.0", id=self.request_id, error=failure.error)
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def direct_call(envelope: jsonrpc.Envelope) -> DirectCall | None:
    """The envelope as a call this module answers, or None for the SDK to serve."""
    message = envelope.message
    if message.get("method") != TOOLS_CALL or "id" not in message:
        return None
    versions = jsonrpc.header_values(envelope.headers, b"mcp-protocol-version")
    if len(versions) > 1:
        return None
    version = versions[0] if versions else DEFAULT_NEGOTIATED_VERSION
    if version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None  # the 2026 era, or a version the SDK refuses
    params = message.get("params")
    try:
        methods.validate_client_request(TOOLS_CALL, version, params)
        typed = types.CallToolRequestParams.model_validate(
            {} if params is None else params, by_name=False
        )
    except (pydantic.ValidationError, KeyError, ValueError):
        return None  # the SDK's own refusal
    return DirectCall(version, message["id"], typed)
