"""The MCP prompts: `resume`, the brief a new session starts from (continuity.brief).

Clients that show prompts as commands (Claude Code: `/mcp__heyaira__resume`) give a person one
command to pick up the work. It takes no arguments: it is server_identity and
continuity_context (the newest running summary of any agent) as the Caller may read them, each
run and audited as the Operation it is, in one unit of database work. The endpoint has
authenticated the request and asked both operations for any step-up before the SDK calls this
(continuity.mcp.asgi), so a credential without continuity:read meets the same 403 as at
tools/call.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from continuity.brief import render_brief
from continuity.catalog import OPERATIONS
from continuity.mcp.calls import CallContext, rpc_error
from continuity.outputs import ContextOut, IdentityOut
from core.access import Caller
from core.errors import HeyAiraError, Unavailable
from core.operations import Operation
from runtime.orm import run_orm

RESUME = "resume"
PROMPTS = [
    types.Prompt(
        name=RESUME,
        title="Resume the work",
        description="This project's continuity brief: the running summary, open tasks (ready "
        "first, with versions, leases and next steps), the newest decisions and notes, and "
        "recent work receipts.",
    )
]
# What `resume` runs: the endpoint asks them for a step-up before the SDK serves the request.
RESUME_OPERATIONS: tuple[Operation[..., Any, Any], ...] = (
    OPERATIONS["server_identity"].operation,
    OPERATIONS["continuity_context"].operation,
)


def operations_of(name: str | None) -> tuple[Operation[..., Any, Any], ...]:
    return RESUME_OPERATIONS if name == RESUME else ()


async def list_prompts(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


async def get_prompt(
    ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    if params.name != RESUME:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name[:100]}")
    call: CallContext = ctx.request.state.mcp_call  # type: ignore[union-attr]
    assert call.caller is not None  # the endpoint authenticated every request it hands the SDK
    try:
        text = await run_orm(resume_brief, call.caller)
    except Unavailable as error:
        raise rpc_error(error) from None
    except HeyAiraError as error:
        raise MCPError(types.INVALID_REQUEST, error.message, {"error": error.as_dict()}) from None
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.GetPromptResult(description=PROMPTS[0].description, messages=[message])


def resume_brief(caller: Caller) -> str:
    """The brief, as `caller` may read it (two audited reads)."""
    identity, context = (operation.call(caller, {}) for operation in RESUME_OPERATIONS)
    assert isinstance(identity, IdentityOut)
    assert isinstance(context, ContextOut)
    return render_brief(identity, context)
