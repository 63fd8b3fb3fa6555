"""The /mcp endpoint as an ASGI application, in front of the SDK's session manager.

In order: header values trimmed of the whitespace around them (once, here, for every check
after); request id; POST only (GET and DELETE get 405: stateless, no streams, no sessions);
Host and Origin (DNS-rebinding protection); body size; the JSON-RPC envelope (headers, parsing
and message shape, continuity.mcp.jsonrpc); authentication (401 with the challenge); step-up
(403 insufficient_scope when the tool needs a scope the credential lacks but the role allows,
core.stepup); then the SDK, with the Caller in a context variable (or, for a 2026-era
`subscriptions/listen`, the endpoint's own 404: jsonrpc.not_served).
"""

from __future__ import annotations

import json

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Message, Receive, Scope, Send

from continuity.mcp import jsonrpc, onehop
from continuity.mcp.direct import direct_call
from continuity.mcp.server import current_caller
from continuity.mcp.tools import TOOLS
from continuity.mcp.unavailable import unavailable_answer
from core import stepup
from core.access import Caller
from core.database import NoCapacity
from core.errors import Unavailable
from core.request_ids import request_id_from
from identity import authn
from runtime.orm import run_orm

MAX_BODY_BYTES = 1024 * 1024


class McpEndpoint:
    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = _trimmed(scope)
        headers = _headers(scope)
        request_id = request_id_from(headers.get("x-request-id"))
        send = _with_header(send, "x-request-id", request_id)
        if scope["method"] != "POST":
            await _respond(
                send, 405, _error_body("method_not_allowed", "Use POST."), [("allow", "POST")]
            )
            return
        rejection = _check_host_and_origin(headers)
        if rejection is not None:
            await _respond(send, rejection[0], _error_body("forbidden", rejection[1]))
            return
        body = await _read_body(receive)
        if body is None:
            await _respond(send, 413, _error_body("validation_error", "Request body too large."))
            return
        envelope = jsonrpc.check_request(scope["headers"], body)
        if isinstance(envelope, jsonrpc.Refusal):
            await _respond(send, envelope.status, envelope.body())
            return
        if isinstance(envelope, jsonrpc.Envelope) and envelope.tool_name in TOOLS:
            await self._call_in_one_unit(scope, envelope, send, headers, body, request_id)
            return
        try:
            caller = await _authenticate(headers, request_id, scope)
            await _require_scope_for_tool(caller, envelope)
        except authn.AuthenticationFailed as failure:
            await _respond(
                send,
                failure.status,
                json.dumps({"error": failure.error.as_dict()}).encode(),
                [("www-authenticate", failure.www_authenticate)],
            )
            return
        except Unavailable as error:
            await _respond_unavailable(send, headers, body, error)
            return
        token = current_caller.set(caller)
        try:
            await self._serve(scope, envelope, send)
        finally:
            current_caller.reset(token)

    async def _serve(
        self, scope: Scope, checked: jsonrpc.Envelope | jsonrpc.Batch, send: Send
    ) -> None:
        """The SDK answers each message; a batch's answers are gathered into one array."""
        if isinstance(checked, jsonrpc.Envelope):
            await self._dispatch(scope, checked, jsonrpc.json_refusals(send, checked.request_id))
            return

        async def one(envelope: jsonrpc.Envelope) -> bytes:
            captured = _Captured()
            refusals = jsonrpc.json_refusals(captured.send, envelope.request_id)
            await self._dispatch(scope, envelope, refusals)
            return captured.body

        body = await jsonrpc.serve_batch(checked, one)
        await _respond(send, 200 if body else 202, body)

    async def _call_in_one_unit(
        self,
        scope: Scope,
        envelope: jsonrpc.Envelope,
        send: Send,
        headers: dict[str, str],
        body: bytes,
        request_id: str,
    ) -> None:
        """A tools/call whose authentication runs in the tool's own database unit (onehop),
        answered without the SDK's per-request session where continuity.mcp.direct can."""
        pending = onehop.Deferred(headers.get("authorization"), request_id, _client_address(scope))
        answer = _answering(pending, send, headers, body, scope)
        direct = direct_call(envelope)
        token = onehop.deferred.set(pending)
        try:
            if direct is None:
                refusals = jsonrpc.json_refusals(answer, envelope.request_id)
                await self._dispatch(scope, envelope, refusals)
            else:
                await _respond(answer, 200, await direct.answer())
        finally:
            onehop.deferred.reset(token)

    async def _dispatch(self, scope: Scope, envelope: jsonrpc.Envelope, send: Send) -> None:
        unserved = jsonrpc.not_served(envelope)
        if unserved is not None:
            await _respond(send, unserved.status, unserved.body())
            return
        await self.manager.handle_request(
            {**scope, "headers": envelope.headers}, _replay(envelope.body), send
        )


async def _authenticate(headers: dict[str, str], request_id: str, scope: Scope) -> Caller:
    """The Caller, or Unavailable when the database cannot say (already audited, or queued for
    the audit log when no database thread even came free)."""
    try:
        return await run_orm(
            authn.authenticate,
            headers.get("authorization"),
            resource="mcp",
            request_id=request_id,
            client_address=_client_address(scope),
        )
    except NoCapacity:
        authn.defer_unavailable_audit(
            headers.get("authorization"), resource="mcp", request_id=request_id
        )
        raise


def _answering(
    pending: onehop.Deferred, send: Send, headers: dict[str, str], body: bytes, scope: Scope
) -> Send:
    """The SDK's response, or in its place the refusal the tool call's authentication left on
    `pending`. If the SDK answered without calling the tool (it refused the request itself),
    the request is authenticated first, exactly as every other request is."""
    replaced = False

    async def sender(message: Message) -> None:
        nonlocal replaced
        if message["type"] == "http.response.start":
            if not pending.ran:
                await _authenticate_late(pending, headers, scope)
            replaced = pending.answered
            if replaced:
                await _answer_refusal(pending, send, headers, body)
                return
        if not replaced:
            await send(message)

    return sender


async def _authenticate_late(
    pending: onehop.Deferred, headers: dict[str, str], scope: Scope
) -> None:
    pending.ran = True
    try:
        pending.caller = await _authenticate(headers, pending.request_id, scope)
    except authn.AuthenticationFailed as failure:
        pending.refused = failure
    except Unavailable as error:
        pending.unavailable = error


async def _answer_refusal(
    pending: onehop.Deferred, send: Send, headers: dict[str, str], body: bytes
) -> None:
    if pending.refused is not None:
        failure = pending.refused
        await _respond(
            send,
            failure.status,
            json.dumps({"error": failure.error.as_dict()}).encode(),
            [("www-authenticate", failure.www_authenticate)],
        )
        return
    assert pending.unavailable is not None
    if isinstance(pending.unavailable, NoCapacity):
        # No database thread came free: authentication never started; its row waits.
        authn.defer_unavailable_audit(
            headers.get("authorization"), resource="mcp", request_id=pending.request_id
        )
    await _respond_unavailable(send, headers, body, pending.unavailable)


async def _respond_unavailable(
    send: Send, headers: dict[str, str], body: bytes, error: Unavailable
) -> None:
    answer = unavailable_answer(body, headers.get("mcp-protocol-version"), error)
    await _respond(send, 200, answer, [("retry-after", str(error.retry_after))])


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


async def _require_scope_for_tool(
    caller: Caller, checked: jsonrpc.Envelope | jsonrpc.Batch
) -> None:
    """Step-up: a tools/call the role allows but the credential's scopes do not is an HTTP 403
    with a challenge, decided and audited by core.stepup exactly as REST does (in a batch,
    the first such call refuses the whole batch: one HTTP answer has one status)."""
    for envelope in jsonrpc.messages_of(checked):
        spec = TOOLS.get(envelope.tool_name or "")
        if spec is None:
            continue
        refusal = stepup.shortfall(caller, spec.capability)
        if refusal is not None:
            await run_orm(stepup.refuse, caller, spec.name, refusal)
            raise authn.step_up(caller, refusal)


def _check_host_and_origin(headers: dict[str, str]) -> tuple[int, str] | None:
    host, _ = split_domain_port(headers.get("host", ""))
    if not host or not validate_host(host, settings.ALLOWED_HOSTS):
        return 421, "Host is not served here."
    origin = headers.get("origin")
    if origin is not None and origin not in settings.HEYAIRA_MCP_ALLOWED_ORIGINS:
        # A browser page from another origin (DNS rebinding) must not reach the endpoint.
        return 403, "Origin not allowed."
    return None


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    """A receive callable that hands the already-read body to the SDK."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def _trimmed(scope: Scope) -> Scope:
    """The request with each header value stripped of the spaces and tabs around it: RFC 9110
    (section 5.5) says they are not part of the value. h11 strips them; httptools, uvicorn's
    faster parser, keeps them, and the SDK then refused `Mcp-Name: tools_x ` as a mismatch."""
    headers = [(name, value.strip(b" \t")) for name, value in scope["headers"]]
    return {**scope, "headers": headers}


def _headers(scope: Scope) -> dict[str, str]:
    return {
        name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]
    }


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""


def _with_header(send: Send, name: str, value: str) -> Send:
    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {
                **message,
                "headers": [*message.get("headers", []), (name.encode(), value.encode("latin-1"))],
            }
        await send(message)

    return sender


def _error_body(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[str, str]] | None = None
) -> None:
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    raw_headers += [(k.encode(), v.encode("latin-1")) for k, v in headers or []]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})
