"""The MCP server: tools/list and tools/call over the Core operations.

Built on the official SDK's low-level Server; the Streamable HTTP session manager (stateless,
JSON responses) serves the handshake era (2025-03-26 .. 2025-11-25) and the stateless 2026-07-28
era on one endpoint. Authentication happens before the SDK sees a request (continuity.mcp.asgi);
the Caller arrives here through a context variable.
"""

from __future__ import annotations

import contextvars
import json
import logging
from typing import Any

import mcp_types as types
import pydantic
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError

from audit.recorder import AuditNote, defer_rejection, record_after_failure, storable
from continuity.mcp import onehop
from continuity.mcp.tools import INSTRUCTIONS, SPECS, TOOLS
from core.access import Caller
from core.database import NoCapacity
from core.errors import HeyAiraError, Unauthenticated, Unavailable
from runtime.orm import run_orm

logger = logging.getLogger(__name__)

# The authenticated Caller of the request being served (set by the ASGI wrapper).
current_caller: contextvars.ContextVar[Caller] = contextvars.ContextVar("heyaira_mcp_caller")

# `unavailable` as a JSON-RPC error, where no tool result can carry it: -32000..-32019 are
# implementation-defined (mcp_types.jsonrpc), and -32002 is retired.
UNAVAILABLE_RPC_CODE = -32010

_TOOL_LIST = [spec.as_tool() for spec in SPECS]
_INPUT_SCHEMAS = {tool.name: tool.input_schema for tool in _TOOL_LIST}


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


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOL_LIST)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    return await answer_tool_call(params)


async def answer_tool_call(params: types.CallToolRequestParams) -> types.CallToolResult:
    """The tool's result, through the SDK (call_tool) or directly (continuity.mcp.direct)."""
    pending = onehop.deferred.get()
    caller = current_caller.get(None)
    spec = TOOLS.get(params.name)
    if spec is None or (caller is None and pending is None):
        if caller is None:  # the endpoint defers authentication only for a known tool
            raise RuntimeError("a tools/call without a Caller")
        await run_orm(_record_unknown_tool, caller, params.name)
        # The MCP spec's answer to an unknown tool; the name is echoed only in storable form.
        name = storable(params.name, 100)
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
    arguments = params.arguments or {}
    try:
        if caller is not None:
            result = await run_orm(spec.operation.call, caller, arguments)
        else:
            assert pending is not None
            # Authentication and the operation in one unit of database work (onehop).
            found = await run_orm(onehop.authenticate_and_call, pending, spec, arguments)
            if found is None:
                return error_result(Unauthenticated())  # the endpoint answers in its place
            result = found
    except NoCapacity as error:
        if caller is None:
            # Nothing ran, not even authentication: the endpoint answers `unavailable`.
            assert pending is not None
            pending.unavailable = error
            return error_result(error)
        # The operation never ran, so it audited nothing: the row waits for the database.
        defer_rejection(caller, spec.name, error.code)
        return error_result(error)
    except HeyAiraError as error:
        return error_result(error)
    except Exception:
        # The operation already audited it as an error; the client learns nothing internal.
        request_id = caller.request_id if caller else pending.request_id if pending else ""
        logger.exception("tool %s failed (request %s)", spec.name, request_id)
        return tool_result(
            {"error": {"code": "internal_error", "message": "The server failed; try again."}},
            is_error=True,
        )
    return tool_result(result.model_dump(mode="json"))


def _record_unknown_tool(caller: Caller, name: str) -> None:
    # The recorder makes the name storable (NUL and all); if even that write fails, it logs.
    note = AuditNote(target_type="tool", target_id=name)
    record_after_failure(caller, "tools_call", note, "unknown_tool")


class HideInternalErrors:
    """No exception text ever reaches a client as a JSON-RPC error (the SDK's legacy path would
    send str(exc)); tool failures are already results, so this only guards the rest. A database
    fault anywhere else is still the retryable `unavailable`, never -32603."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        try:
            return await call_next(ctx)
        except (MCPError, pydantic.ValidationError):
            raise
        except Exception as error:
            raise rpc_error(error) from None


def rpc_error(error: Exception) -> MCPError:
    """A failure outside a tool's own result, as the JSON-RPC error a client may see (call it
    while handling `error`: anything unexpected is logged with its traceback)."""
    if isinstance(error, MCPError):
        return error
    if isinstance(error, Unavailable):
        return MCPError(UNAVAILABLE_RPC_CODE, error.message, error.as_dict())
    logger.exception("MCP request failed")
    return MCPError(code=types.INTERNAL_ERROR, message="Internal server error")


def build_server() -> Server[Any]:
    server: Server[Any] = Server(
        "heyaira",
        version="0.1.0",
        title="HeyAira",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=_INPUT_SCHEMAS.get,
    )
    server.middleware.append(HideInternalErrors())
    return server


def build_session_manager() -> StreamableHTTPSessionManager:
    # Stateless with JSON responses: no session ids, no SSE streams, any worker serves any
    # request (docs/scaling.md). Host and Origin are checked by our ASGI wrapper.
    return StreamableHTTPSessionManager(app=build_server(), stateless=True, json_response=True)
