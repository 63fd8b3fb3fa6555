"""A tools/call at a handshake-era revision, typed from its envelope and answered on the wire.

The endpoint serves the common request, one tools/call at a revision with the `initialize`
handshake, without the SDK's per-request session: in stateless mode that session (a transport,
a task group, memory streams, a dispatcher, a connection and a runner per POST) costs about as
much event-loop time as the rest of the request together (the throughput bench,
docs/scaling.md). It uses the SDK's own pieces: the request is validated by `mcp_types.methods`
against the revision's surface and typed as the SDK's handler gets it, and the result goes
through `serialize_server_result` and the SDK's JSON-RPC response model, dumped as the SDK's
transport dumps it (tests/continuity/mcp/test_direct_calls.py holds the two to the same
bytes). Anything else, and any request the SDK would refuse, goes to the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types as types
import pydantic
from mcp.shared.exceptions import MCPError
from mcp_types import DEFAULT_NEGOTIATED_VERSION, methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from continuity.mcp import jsonrpc
from continuity.mcp.calls import rpc_error

TOOLS_CALL = "tools/call"


@dataclass(frozen=True)
class HandshakeCall:
    """A tools/call the endpoint answers itself: its revision, id and typed params."""

    version: str
    request_id: str | int
    params: types.CallToolRequestParams

    def answer(self, outcome: types.CallToolResult | MCPError) -> bytes:
        """The JSON-RPC response body, as the SDK's transport would write it."""
        message: types.JSONRPCResponse | types.JSONRPCError
        try:
            if isinstance(outcome, MCPError):
                raise outcome
            dumped = outcome.model_dump(by_alias=True, mode="json", exclude_none=True)
            wire = methods.serialize_server_result(TOOLS_CALL, self.version, dumped)
            message = types.JSONRPCResponse(jsonrpc="2.0", id=self.request_id, result=wire)
        except Exception as error:
            # As on the SDK path (HideInternalErrors): no exception text reaches the client.
            failure = rpc_error(error)
            message = types.JSONRPCError(jsonrpc="2.0", id=self.request_id, error=failure.error)
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def handshake_call(envelope: jsonrpc.Envelope) -> HandshakeCall | None:
    """The envelope as a call the endpoint answers, or None for the SDK to serve."""
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
    return HandshakeCall(version, message["id"], typed)
