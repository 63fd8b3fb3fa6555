"""A tools/call in one unit of database work: authentication and the operation together.

For a single tools/call naming a known tool, the endpoint (continuity.mcp.asgi) does not
authenticate up front; the tool handler authenticates in the same executor thread, on the same
pooled connection and in the same unit as the operation: one thread hop and one pool checkout
per call instead of two. Nothing is cached between requests, so a revoked credential is
refused on its very next call.

What a refusal looks like does not change: an authentication failure or a step-up is still an
HTTP 401/403 with its challenge, and `unavailable` still the same JSON-RPC answer. The handler
leaves that answer here (`Deferred.answer`) and the endpoint sends it in place of the SDK's
response. When the SDK answers without calling the handler (a request it refuses itself), the
endpoint authenticates before letting that answer out, so an unauthenticated client still
learns nothing but 401.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Any

from continuity.mcp.tools import ToolSpec
from continuity.outputs import Output
from core.access import Caller
from core.errors import Unavailable
from core.stepup import InsufficientScope
from identity import authn


@dataclass
class Deferred:
    """One request's authentication, waiting for the tool call's unit of database work."""

    authorization: str | None
    request_id: str
    client_address: str
    ran: bool = False
    caller: Caller | None = None
    refused: authn.AuthenticationFailed | None = None
    unavailable: Unavailable | None = None

    @property
    def answered(self) -> bool:
        """Whether the endpoint must answer in place of the SDK."""
        return self.refused is not None or self.unavailable is not None


# Set by the endpoint for a request whose authentication the tool call does.
deferred: contextvars.ContextVar[Deferred | None] = contextvars.ContextVar(
    "heyaira_mcp_deferred_authentication", default=None
)


def authenticate_and_call(
    pending: Deferred, spec: ToolSpec, arguments: dict[str, Any]
) -> Output | None:
    """Runs in one database unit (run_orm): the Caller, then the operation. None when the
    request was refused before the operation (the answer is on `pending`)."""
    pending.ran = True
    try:
        caller = authn.authenticate(
            pending.authorization,
            resource="mcp",
            request_id=pending.request_id,
            client_address=pending.client_address,
        )
    except authn.AuthenticationFailed as failure:
        pending.refused = failure
        return None
    except Unavailable as error:  # audited (or queued for the audit log) by authenticate
        pending.unavailable = error
        return None
    pending.caller = caller
    try:
        result: Output = spec.operation.call(caller, arguments)
    except InsufficientScope as refusal:
        # A step-up is an HTTP 403 with a challenge, not a tool result (already audited).
        pending.refused = authn.step_up(caller, refusal)
        return None
    return result
