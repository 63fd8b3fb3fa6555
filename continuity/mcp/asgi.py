"""The /mcp endpoint: Starlette's Request and Response in front of the SDK's session manager.

In order: header values trimmed of the whitespace around them (once, here, for every check
after); request id; POST only (GET and DELETE get 405: stateless, no streams, no sessions);
Host and Origin (DNS-rebinding protection); the body (within /mcp's cap, heyaira.bodies: the
application refuses a larger one before this runs); the JSON-RPC envelope (headers, parsing
and message shape, continuity.mcp.jsonrpc). Then one of two ways:

- one tools/call at a handshake-era revision (continuity.mcp.wire): the endpoint answers it
  with continuity.mcp.calls.handle_tools_call, which authenticates in the tool's own unit of
  database work; a refusal comes back as a value and is answered as 401/403 with its challenge
  or as `unavailable`;
- anything else goes to the SDK (continuity.mcp.server), authenticated first (401 with the
  challenge); a tools/call among it is asked for its step-up by its operation first (403
  insufficient_scope), and reaches handle_tools_call through the context left on the request.
  A 2026-era `subscriptions/listen` gets the endpoint's own 404 (jsonrpc.not_served).
"""

from __future__ import annotations

import json

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import MutableHeaders
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from continuity.mcp import jsonrpc, prompts
from continuity.mcp.calls import CallContext, handle_tools_call
from continuity.mcp.tools import TOOLS
from continuity.mcp.unavailable import unavailable_answer
from continuity.mcp.wire import handshake_call
from core.access import Caller
from core.database import NoCapacity
from core.errors import Unavailable
from core.request_ids import request_id_from
from core.stepup import InsufficientScope
from identity import authn
from runtime.orm import run_orm
from runtime.replay import replayed

JSON = "application/json"


class McpEndpoint:
    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(_trimmed(scope), receive)
        request_id = request_id_from(request.headers.get("x-request-id"))
        send = _with_request_id(send, request_id)
        try:
            response = await self._answer(request, request_id, send)
        except ClientDisconnect:
            return  # gone before its body arrived: nobody to answer
        if response is not None:
            await response(request.scope, receive, send)

    async def _answer(self, request: Request, request_id: str, send: Send) -> Response | None:
        """The endpoint's own answer, or None when the SDK has answered."""
        if request.method != "POST":
            return _error(405, "method_not_allowed", "Use POST.", {"allow": "POST"})
        rejection = _check_host_and_origin(request)
        if rejection is not None:
            return _error(rejection[0], "forbidden", rejection[1])
        body = await request.body()  # within /mcp's cap: heyaira.bodies read or refused it first
        envelope = jsonrpc.check_request(request.scope["headers"], body)
        if isinstance(envelope, jsonrpc.Refusal):
            return _json(envelope.status, envelope.body())
        call = handshake_call(envelope) if isinstance(envelope, jsonrpc.Envelope) else None
        if call is not None:
            ctx = CallContext(
                request_id, request.headers.get("authorization"), _client_address(request)
            )
            answer = await handle_tools_call(ctx, call.params)
            if isinstance(answer, authn.AuthenticationFailed):
                return _refused(answer)
            if isinstance(answer, Unavailable):
                return _unavailable(request, body, answer)
            return _json(200, call.answer(answer))
        try:
            caller = await _authenticate(request, request_id, envelope)
        except authn.AuthenticationFailed as failure:
            return _refused(failure)
        except Unavailable as error:
            return _unavailable(request, body, error)
        request.state.mcp_call = CallContext(request_id, caller=caller)
        if isinstance(envelope, jsonrpc.Envelope):
            return await self._dispatch(request, envelope, send)
        answers = await jsonrpc.serve_batch(envelope, lambda one: self._one_of_batch(request, one))
        return _json(200 if answers else 202, answers)

    async def _one_of_batch(self, request: Request, envelope: jsonrpc.Envelope) -> bytes:
        captured = _Captured()
        response = await self._dispatch(request, envelope, captured.send)
        if response is not None:
            await response(request.scope, replayed(b""), captured.send)
        return captured.body

    async def _dispatch(
        self, request: Request, envelope: jsonrpc.Envelope, send: Send
    ) -> Response | None:
        unserved = jsonrpc.not_served(envelope)
        if unserved is not None:
            return _json(unserved.status, unserved.body())
        scope = {**request.scope, "headers": envelope.headers}
        await self.manager.handle_request(scope, replayed(envelope.body), send)
        return None


async def _authenticate(
    request: Request, request_id: str, checked: jsonrpc.Envelope | jsonrpc.Batch
) -> Caller:
    """The Caller of a request the SDK serves, or the refusal to raise: 401, the step-up 403
    of any tool it calls or prompt it gets (its operations' own first check: in a batch, the
    first such call refuses the whole batch, since one HTTP answer has one status and nothing
    may have run), or Unavailable when the database cannot say (already audited, or queued for
    the audit log when no database thread even came free)."""
    authorization = request.headers.get("authorization")
    messages = jsonrpc.messages_of(checked)
    names = [envelope.tool_name for envelope in messages]
    operations = [TOOLS[name].operation for name in names if name in TOOLS]
    operations += [op for one in messages for op in prompts.operations_of(one.prompt_name)]

    def unit() -> Caller:
        caller = authn.authenticate(
            authorization,
            resource="mcp",
            request_id=request_id,
            client_address=_client_address(request),
        )
        try:
            for operation in operations:
                operation.require_scopes(caller)
        except InsufficientScope as refusal:
            raise authn.step_up(caller, refusal) from None
        return caller

    try:
        return await run_orm(unit)
    except NoCapacity:
        authn.defer_unavailable_audit(authorization, resource="mcp", request_id=request_id)
        raise


def _refused(failure: authn.AuthenticationFailed) -> Response:
    body = json.dumps({"error": failure.error.as_dict()}).encode()
    return _json(failure.status, body, {"www-authenticate": failure.www_authenticate})


def _unavailable(request: Request, body: bytes, error: Unavailable) -> Response:
    answer = unavailable_answer(body, request.headers.get("mcp-protocol-version"), error)
    return _json(200, answer, {"retry-after": str(error.retry_after)})


class _Captured:
    """An ASGI send that keeps the response body (one batch element's answer)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.body":
            self.chunks.append(message.get("body", b""))

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


def _check_host_and_origin(request: Request) -> tuple[int, str] | None:
    host, _ = split_domain_port(request.headers.get("host", ""))
    if not host or not validate_host(host, settings.ALLOWED_HOSTS):
        return 421, "Host is not served here."
    for origin in request.headers.getlist("origin"):
        if origin not in settings.HEYAIRA_MCP_ALLOWED_ORIGINS:
            # A browser page from another origin (DNS rebinding) must not reach the endpoint.
            return 403, "Origin not allowed."
    return None


def _trimmed(scope: Scope) -> Scope:
    """The request with each header value stripped of the spaces and tabs around it: RFC 9110
    (section 5.5) says they are not part of the value. h11 strips them; httptools, uvicorn's
    faster parser, keeps them, and the SDK then refused `Mcp-Name: tools_x ` as a mismatch."""
    headers = [(name, value.strip(b" \t")) for name, value in scope["headers"]]
    return {**scope, "headers": headers}


def _client_address(request: Request) -> str:
    return request.client.host if request.client else ""


def _with_request_id(send: Send, request_id: str) -> Send:
    """Every answer, the endpoint's own or the SDK's, carries the request id."""

    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message).append("x-request-id", request_id)
        await send(message)

    return sender


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    return _json(status, body, headers)


def _json(status: int, body: bytes, headers: dict[str, str] | None = None) -> Response:
    return Response(body, status_code=status, headers=headers, media_type=JSON)
