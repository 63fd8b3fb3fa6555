"""One tools/call, whichever way it reached the endpoint: `handle_tools_call(ctx, params)`.

The endpoint (continuity.mcp.asgi) passes what the call needs in a `CallContext`: the request's
credential, id and client address, or the Caller when it authenticated the request already.
Authentication and the operation run in one unit of database work (runtime.orm.run_orm):
one thread hop and one pooled connection per call. Nothing is cached between requests, so a
revoked credential is refused on its very next call.

What comes back is a value, never an exception for the transport to catch:

- a `CallToolResult`: the tool's result, or a tool error (`isError`, the pinned error codes);
- `authn.AuthenticationFailed`: a 401 or a step-up 403 with its challenge (the step-up is the
  Operation's own first check, core.operations);
- `Unavailable`: authentication could not run (the database is away); the endpoint answers the
  retryable `unavailable` (continuity.mcp.unavailable);
- `MCPError`: a JSON-RPC error (an unknown tool, as the MCP specification answers it).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from audit.recorder import AuditNote, defer_rejection, record_after_failure, storable
from continuity.mcp.tools import TOOLS, ToolSpec
from core.access import Caller
from core.database import NoCapacity
from core.errors import HeyAiraError, Unavailable
from core.stepup import InsufficientScope
from identity import authn
from runtime.orm import run_orm

logger = logging.getLogger(__name__)

# `unavailable` as a JSON-RPC error, where no tool result can carry it: -32000..-32019 are
# implementation-defined (mcp_types.jsonrpc), and -32002 is retired.
UNAVAILABLE_RPC_CODE = -32010

CallAnswer = types.CallToolResult | authn.AuthenticationFailed | Unavailable | MCPError


@dataclass(frozen=True)
class CallContext:
    """What one tools/call needs from its request: who calls, and which request it is."""

    request_id: str
    authorization: str | None = None
    client_address: str = ""
    caller: Caller | None = None  # set when the endpoint authenticated the request already


async def handle_tools_call(ctx: CallContext, params: types.CallToolRequestParams) -> CallAnswer:
    """The answer to one tools/call: authentication (unless done) and the tool, in one unit."""
    spec = TOOLS.get(params.name)
    try:
        return await run_orm(_in_one_unit, ctx, spec, params.name, params.arguments or {})
    except NoCapacity as error:
        # No database thread came free: nothing ran, not even authentication.
        if ctx.caller is None:
            authn.defer_unavailable_audit(
                ctx.authorization, resource="mcp", request_id=ctx.request_id
            )
            return error  # answered as `unavailable`, before anyone is known
        if spec is None:
            return rpc_error(error)
        # The operation never ran, so it audited nothing: the row waits for the database.
        defer_rejection(ctx.caller, spec.name, error.code)
        return error_result(error)
    except HeyAiraError as error:
        return error_result(error)
    except Exception:
        # The operation already audited it as an error; the client learns nothing internal.
        logger.exception("tool %s failed (request %s)", storable(params.name, 100), ctx.request_id)
        return tool_result(
            {"error": {"code": "internal_error", "message": "The server failed; try again."}},
            is_error=True,
        )


def _in_one_unit(
    ctx: CallContext, spec: ToolSpec | None, name: str, arguments: dict[str, Any]
) -> CallAnswer:
    caller = ctx.caller
    if caller is None:
        try:
            caller = authn.authenticate(
                ctx.authorization,
                resource="mcp",
                request_id=ctx.request_id,
                client_address=ctx.client_address,
            )
        except authn.AuthenticationFailed as failure:
            return failure
        except Unavailable as error:  # audited (or queued for the audit log) by authenticate
            return error
    if spec is None:
        _record_unknown_tool(caller, name)
        # The MCP spec's answer to an unknown tool; the name is echoed only in storable form.
        return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {storable(name, 100)}")
    try:
        return tool_result(spec.operation.call(caller, arguments).model_dump(mode="json"))
    except InsufficientScope as refusal:
        # A step-up is an HTTP 403 with a challenge, not a tool result (already audited).
        return authn.step_up(caller, refusal)


def _record_unknown_tool(caller: Caller, name: str) -> None:
    # The recorder makes the name storable (NUL and all); if even that write fails, it logs.
    note = AuditNote(target_type="tool", target_id=name)
    record_after_failure(caller, "tools_call", note, "unknown_tool")


def tool_result(data: dict[str, Any], *, is_error: bool = False) -> types.CallToolResult:
    """structuredContent plus the same JSON as text, for clients that read only content."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data,
        is_error=is_error,
    )


def error_result(error: HeyAiraError) -> types.CallToolResult:
    return tool_result({"error": error.as_dict()}, is_error=True)


def rpc_error(error: Exception) -> MCPError:
    """A failure outside a tool's own result, as the JSON-RPC error a client may see (call it
    while handling `error`: anything unexpected is logged with its traceback)."""
    if isinstance(error, MCPError):
        return error
    if isinstance(error, Unavailable):
        return MCPError(UNAVAILABLE_RPC_CODE, error.message, error.as_dict())
    logger.exception("MCP request failed")
    return MCPError(code=types.INTERNAL_ERROR, message="Internal server error")
