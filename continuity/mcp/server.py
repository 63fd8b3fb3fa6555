"""The SDK's part of /mcp: initialize, tools/list, prompts, notifications and the 2026-07-28
envelope.

Built on the official SDK's low-level Server; the Streamable HTTP session manager (stateless,
JSON responses) serves the handshake era (2025-03-26 .. 2025-11-25) and the stateless 2026-07-28
era on one endpoint. The endpoint (continuity.mcp.asgi) authenticates every request it hands the
SDK first and leaves the call's context on the request (`request.state.mcp_call`); a tools/call
that reaches the SDK (a 2026-07-28 one, a batch element) goes to the same
continuity.mcp.calls.handle_tools_call as every other.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pydantic
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError

from continuity.mcp import prompts
from continuity.mcp.calls import CallContext, error_result, handle_tools_call, rpc_error
from continuity.mcp.tools import INSTRUCTIONS, SPECS
from identity import authn

_TOOL_LIST = [spec.as_tool() for spec in SPECS]
_INPUT_SCHEMAS = {tool.name: tool.input_schema for tool in _TOOL_LIST}


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOL_LIST)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    call: CallContext = ctx.request.state.mcp_call  # type: ignore[union-attr]
    answer = await handle_tools_call(call, params)
    if isinstance(answer, types.CallToolResult):
        return answer
    if isinstance(answer, MCPError):
        raise answer
    # The endpoint authenticated the request and asked the operations for any step-up before
    # the SDK saw it; a refusal that comes up only now can be no more than a tool error.
    return error_result(answer.error if isinstance(answer, authn.AuthenticationFailed) else answer)


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


def build_server() -> Server[Any]:
    server: Server[Any] = Server(
        "heyaira",
        version="0.1.0",
        title="HeyAira",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=prompts.list_prompts,
        on_get_prompt=prompts.get_prompt,
        get_tool_input_schema=_INPUT_SCHEMAS.get,
    )
    server.middleware.append(HideInternalErrors())
    return server


def build_session_manager() -> StreamableHTTPSessionManager:
    # Stateless with JSON responses: no session ids, no SSE streams, any worker serves any
    # request (docs/scaling.md). Host and Origin are checked by our ASGI wrapper.
    return StreamableHTTPSessionManager(app=build_server(), stateless=True, json_response=True)
