"""The JSON-RPC envelope of a POST to /mcp, checked once, before anything recursive reads it.

The SDK parses bodies with recursive code (`json.loads` on its 2026 path, then pydantic), so a
small body nested a thousand levels deep overflowed the stack (HTTP 500), and it lets through
messages JSON-RPC 2.0 calls invalid (a request whose id is `true` or `1.5` was taken for a
notification and got 202). So the endpoint checks, in order:

- the headers: Content-Type must be `application/json` (UTF-8), else 415; Accept must allow
  `application/json`, else 406 (JSON responses only: the endpoint never streams);
- the body: parsed once by pydantic-core's parser (Rust, no Python recursion), then walked
  without recursion; invalid UTF-8, JSON that is not JSON, nesting deeper than MAX_DEPTH or a
  number out of range is -32700 Parse error;
- the message: one JSON-RPC 2.0 object; a batch (an array) only at the revisions whose
  receivers must take them (2024-11-05 and 2025-03-26, the default without a version header;
  2025-06-18 dropped them), each element checked alike and served in turn; a request's
  id is a string or an integer, its method a string without control characters, its params an
  object, and it has no result or error member; anything else is
  -32600 Invalid Request (-32602 for params that are not an object).

Every refusal is a JSON-RPC error object with HTTP 400 (415, 406), as the SDK answers its own
parse errors; it echoes the request's id whenever the body held a message with a valid id (a
header refusal included), and is null otherwise. What passes goes to the SDK as it came (less a
UTF-8 byte-order mark, which RFC 8259 lets a parser ignore).

One method is answered here rather than by the SDK: `subscriptions/listen` where the SDK's
2026-era entry would take it (see `not_served`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from http import HTTPStatus
from typing import Any

import pydantic_core
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

# Tool arguments are a few levels deep; 64 leaves room and keeps every later walk shallow.
MAX_DEPTH = 64
JSON = "application/json"
_BOM = b"\xef\xbb\xbf"
# Revisions whose receivers must accept JSON-RPC batches; 2025-06-18 removed them.
BATCH_VERSIONS = frozenset({"2024-11-05", "2025-03-26"})
MAX_BATCH = 50
_UTF8 = frozenset({"utf-8", "utf8"})
_ACCEPTS_JSON = frozenset({"*/*", "application/*", JSON})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
RawHeaders = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class Refusal:
    """A JSON-RPC error answered by the endpoint itself."""

    status: int
    code: int
    message: str
    id: str | int | None = None
    data: str | None = None

    def answer(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": self.id, "error": error}

    def body(self) -> bytes:
        return json.dumps(self.answer()).encode()


@dataclass(frozen=True)
class Envelope:
    """A message that passed: what the SDK gets (body and headers), and what it says."""

    body: bytes
    headers: RawHeaders
    message: dict[str, Any]

    @property
    def request_id(self) -> str | int | None:
        """The id a refusal of this message echoes (check_message let only valid ids through)."""
        found = self.message.get("id")
        return found if _valid_id(found) else None

    @property
    def tool_name(self) -> str | None:
        """The tool a tools/call names, if it names one."""
        return self._name_for("tools/call")

    @property
    def prompt_name(self) -> str | None:
        """The prompt a prompts/get names, if it names one."""
        return self._name_for("prompts/get")

    def _name_for(self, method: str) -> str | None:
        if self.message.get("method") != method:
            return None
        params = self.message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        return name if isinstance(name, str) else None


@dataclass(frozen=True)
class Batch:
    """A batch at a revision that has them: each element to serve, or the error it gets."""

    items: tuple[Envelope | Refusal, ...]

    @property
    def envelopes(self) -> list[Envelope]:
        return [item for item in self.items if isinstance(item, Envelope)]


def messages_of(checked: Envelope | Batch) -> list[Envelope]:
    return checked.envelopes if isinstance(checked, Batch) else [checked]


def check_request(headers: RawHeaders, body: bytes) -> Envelope | Batch | Refusal:
    """The request's headers, then its body, then its message; the first fault is answered."""
    refusal = _check_content_type(header_values(headers, b"content-type")) or _check_accept(
        header_values(headers, b"accept")
    )
    body = body.removeprefix(_BOM)
    if refusal is not None:
        return replace(refusal, id=_id_if_any(body))
    parsed = parse(body)
    if isinstance(parsed, Refusal):
        return parsed
    if isinstance(parsed, list) and parsed and _takes_batches(headers):
        return _batch(parsed, _normalized(headers))
    refusal = check_message(parsed)
    if refusal is not None:
        return refusal
    assert isinstance(parsed, dict)  # check_message refuses anything else
    return Envelope(body=body, headers=_normalized(headers), message=parsed)


def _id_if_any(body: bytes) -> str | int | None:
    """The id of the message a refused request carried, when it parses as one with a valid id."""
    parsed = parse(body)
    if isinstance(parsed, dict) and check_message(parsed) is None:
        found = parsed.get("id")
        return found if _valid_id(found) else None
    return None


def not_served(envelope: Envelope) -> Refusal | None:
    """`subscriptions/listen` where the SDK's 2026-era entry would take it, as a server with
    nothing to subscribe to answers it.

    Its response would be a long-lived event stream of the change notifications the client opts
    in to; HeyAira's tool list never changes at run time, it declares no `listChanged` or
    `subscribe` capability, and this endpoint never streams. So at 2026-07-28 it is a method
    this server does not implement, which that transport answers with 404 and -32601 Method not
    found (as the SDK answers every other such method), with the request's id. At any other
    version the SDK's modern entry takes (an unknown one, or the header twice) it would refuse
    the JSON-only Accept with a bare 406: the same refusal, as a JSON-RPC error. The handshake
    era has no such method: the SDK answers it there."""
    message = envelope.message
    if message.get("method") != "subscriptions/listen" or "id" not in message:
        return None
    versions = header_values(envelope.headers, b"mcp-protocol-version")
    if not versions or versions[0] in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    if len(versions) == 1 and versions[0] in MODERN_PROTOCOL_VERSIONS:
        return Refusal(
            404, METHOD_NOT_FOUND, "Method not found", envelope.request_id, "subscriptions/listen"
        )
    return Refusal(406, INVALID_REQUEST, HTTPStatus(406).phrase, envelope.request_id)


def _takes_batches(headers: RawHeaders) -> bool:
    versions = header_values(headers, b"mcp-protocol-version")
    return (versions[0] if versions else DEFAULT_NEGOTIATED_VERSION) in BATCH_VERSIONS


def _batch(elements: list[Any], headers: RawHeaders) -> Batch | Refusal:
    if len(elements) > MAX_BATCH:
        return _invalid(f"A batch holds at most {MAX_BATCH} messages.")
    items: list[Envelope | Refusal] = []
    for element in elements:
        refusal = check_message(element)  # a batch inside a batch is refused here
        if refusal is not None:
            items.append(refusal)
        else:
            # Re-encoded for the SDK: it parsed, so it encodes (no lone surrogates, no NaN).
            body = json.dumps(element, ensure_ascii=False).encode()
            items.append(Envelope(body=body, headers=headers, message=element))
    return Batch(items=tuple(items))


async def serve_batch(batch: Batch, dispatch: Callable[[Envelope], Awaitable[bytes]]) -> bytes:
    """The batch's answer: every element's response in order (none for notifications and
    responses), as JSON-RPC 2.0 section 6 says; b"" when there is none (then 202)."""
    answers: list[Any] = []
    for item in batch.items:
        if isinstance(item, Refusal):
            answers.append(item.answer())
            continue
        body = await dispatch(item)
        if body.strip():
            answers.append(json.loads(body))
    return json.dumps(answers).encode() if answers else b""


def parse(body: bytes) -> Any | Refusal:
    """The JSON value of a body, or a Parse error; never deeper than MAX_DEPTH."""
    try:
        value = pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError as error:
        # pydantic-core's messages name the fault and its position, never the content; its own
        # depth limit (200) is past ours, so say ours.
        detail = str(error)
        if detail.startswith("recursion limit exceeded"):
            detail = f"nested deeper than {MAX_DEPTH} levels"
        return _parse_error(detail)
    fault = _shape_fault(value)
    return value if fault is None else _parse_error(fault)


def check_message(message: Any) -> Refusal | None:
    """Why a parsed body is not one JSON-RPC 2.0 message MCP accepts, or None."""
    if isinstance(message, list):
        if not message:
            return _invalid("An empty batch.")
        return _invalid("A batch is not accepted at this protocol revision (2025-06-18 on).")
    if not isinstance(message, dict):
        return _invalid("The body must be a JSON-RPC message object.")
    if message.get("jsonrpc") != "2.0":
        return _invalid('jsonrpc must be "2.0".')
    if "method" not in message:
        return _check_response(message)
    if "id" in message and not _valid_id(message["id"]):
        # A message with a method and an id is a request, never a notification (JSON-RPC 2.0
        # section 4.1), so a bad id is an error, not a silent 202.
        return _invalid("id must be a string or an integer.")
    request_id = message.get("id")
    if "result" in message or "error" in message:
        # Neither a request nor a response; the SDK would take it for a response (202).
        return _invalid("A request has no result or error member.", request_id)
    if not isinstance(message["method"], str):
        return _invalid("method must be a string.", request_id)
    if _CONTROL.search(message["method"]):
        # No MCP method has one, and the SDK writes method names into its log lines.
        return _invalid("method must not contain control characters.", request_id)
    if "params" in message and not isinstance(message["params"], dict):
        return Refusal(400, INVALID_PARAMS, "params must be an object.", request_id)
    return None


def _check_response(message: dict[str, Any]) -> Refusal | None:
    """A message without a method is a client's response: result or error, with an id."""
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        return _invalid("A request needs a method; a response needs a result or an error.")
    if has_result:
        valid = _valid_id(message.get("id")) and isinstance(message["result"], dict)
    else:
        error = message["error"]
        valid = (
            (message.get("id") is None or _valid_id(message.get("id")))
            and isinstance(error, dict)
            and _is_int(error.get("code"))
            and isinstance(error.get("message"), str)
        )
    return None if valid else _invalid("The response is not a valid JSON-RPC response.")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or _is_int(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shape_fault(value: Any) -> str | None:
    """Nesting past MAX_DEPTH or a number JSON cannot carry; walked with a stack, not recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(node, float) and not math.isfinite(node):
            return "number out of range"  # 1e999 parses as infinity
    return None


def _check_content_type(values: list[str]) -> Refusal | None:
    if len(values) != 1:
        return _media("Content-Type must be application/json.")
    media_type, *parameters = values[0].split(";")
    if media_type.strip().lower() != JSON:
        return _media("Content-Type must be application/json.")
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in _UTF8:
            return _media("The body must be UTF-8 (RFC 8259).")
    return None


def _check_accept(values: list[str]) -> Refusal | None:
    ranges = {part.split(";")[0].strip().lower() for value in values for part in value.split(",")}
    if ranges & _ACCEPTS_JSON:
        return None
    return Refusal(406, INVALID_REQUEST, "Not Acceptable: the client must accept application/json.")


def _normalized(headers: RawHeaders) -> RawHeaders:
    """The headers the SDK sees: one canonical Content-Type and Accept (the SDK reads only the
    first of each), so it cannot decide differently from this module. Accept is exactly JSON:
    the endpoint never streams (a 2026-era `subscriptions/listen`, which would open an event
    stream, never reaches the SDK: see not_served)."""
    kept = [(k, v) for k, v in headers if k.lower() not in (b"content-type", b"accept")]
    return [*kept, (b"content-type", JSON.encode()), (b"accept", JSON.encode())]


def header_values(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in headers if key.lower() == name]


def _parse_error(detail: str) -> Refusal:
    return Refusal(400, PARSE_ERROR, f"Parse error: {detail}")


def _invalid(message: str, request_id: str | int | None = None) -> Refusal:
    return Refusal(400, INVALID_REQUEST, f"Invalid Request: {message}", request_id)


def _media(message: str) -> Refusal:
    return Refusal(415, INVALID_REQUEST, f"Unsupported Media Type: {message}")
