"""Hostile requests for /mcp, generated with hypothesis, and the one classification of answers.

Shared by tests/continuity/mcp/test_fuzz.py (a few hundred requests through the ASGI application in
process) and bench/mcp_fuzz.py (10,000+ over HTTP against a real server), so both send the same
kinds of request and judge the answers alike. It imports nothing of the server.

What is generated: bodies (well-formed JSON-RPC of both protocol eras, random bytes, truncated
JSON, huge strings, deep nesting, batches, bare JSON values, wrong types for every JSON-RPC field
and for tool arguments), encodings (UTF-16/32, BOM, latin-1, invalid UTF-8, lone surrogate and
NUL escapes, out-of-range numbers), ids of every JSON type, and headers (Content-Type, Accept,
MCP-Protocol-Version, Mcp-Method/Mcp-Name, Origin, Host, Authorization, X-Request-ID, the HTTP
method).

What is allowed back (no input gives a 5xx or a -32603): a result; a tool error
with a pinned code; a JSON-RPC error object with a code JSON-RPC or MCP defines; 202 with no body
for a notification or a client's response; an array of those for a batch (at the revisions that
have batches); the pinned HTTP refusals (401, 403, 405, 406, 413, 415, 421) with a JSON error
body. Anything else is classed `unexpected: ...`.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

PINNED_TOOL_CODES = frozenset(
    {
        "unauthenticated",
        "forbidden",
        "not_found",
        "validation_error",
        "write_context_mismatch",
        "stale_version",
        "invalid_transition",
        "idempotency_conflict",
        "duplicate_receipt",
        "unavailable",
    }
)
# JSON-RPC 2.0's own codes less -32603, and the 2026-07-28 transport's header/version codes.
JSONRPC_CODES = frozenset({-32700, -32600, -32601, -32602, -32020, -32021, -32022})
REFUSAL_STATUSES = frozenset({401, 403, 405, 406, 413, 415, 421})
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
PLACEHOLDER = "@@FUZZ@@"  # a string in a message whose encoded bytes are then replaced


@dataclass(frozen=True)
class Target:
    """What a generator needs to know of the server under test."""

    host: str  # the Host header it serves
    origin: str  # an Origin it allows
    api_key: str
    tools: dict[str, tuple[str, ...]]  # tool name -> its argument names (from tools/list)
    write_context: dict[str, str]


@dataclass(frozen=True)
class FuzzRequest:
    method: str
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    kind: str  # which generator made the body, for the report
    expects_answer: bool  # a JSON object with a method and an id: a request, never a 202


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes


@dataclass
class Tally:
    classes: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    unexpected: list[tuple[FuzzRequest, Answer, str]] = field(default_factory=list)
    skipped: int = 0

    @property
    def total(self) -> int:
        return sum(self.classes.values())

    @property
    def failures(self) -> int:
        return sum(n for name, n in self.classes.items() if name.startswith("unexpected"))

    def add(self, request: FuzzRequest, answer: Answer) -> str:
        name = classify(request, answer)
        self.classes[name] += 1
        self.kinds[request.kind] += 1
        if name.startswith("unexpected") and len(self.unexpected) < 20:
            self.unexpected.append((request, answer, name))
        return name

    def report(self) -> str:
        lines = [f"{n:>7}  {name}" for name, n in sorted(self.classes.items())]
        lines.append(f"{self.total:>7}  in all ({self.failures} unexpected)")
        lines.append("bodies: " + ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items())))
        for request, answer, name in self.unexpected[:5]:
            lines.append(
                f"  {name}: {request.kind} {request.body[:120]!r} {dict(request.headers)!r}"
                f" -> {answer.status} {answer.body[:200]!r}"
            )
        return "\n".join(lines)


# --- the classification -----------------------------------------------------------------------


def classify(request: FuzzRequest, answer: Answer) -> str:
    """The class of one answer; every class not starting with `unexpected` is allowed."""
    if answer.status >= 500:
        return f"unexpected: HTTP {answer.status}"
    if answer.status == 202:
        if answer.body.strip():
            return "unexpected: 202 with a body"
        return "unexpected: 202 for a request" if request.expects_answer else "accepted (202)"
    if not answer.content_type.lower().startswith("application/json"):
        return f"unexpected: HTTP {answer.status} as {answer.content_type or 'no content type'}"
    try:
        body = json.loads(answer.body)
    except ValueError:
        return f"unexpected: HTTP {answer.status} body is not JSON"
    if isinstance(body, list) and answer.status == 200 and body:
        # A batch's answer (2024-11-05 and 2025-03-26): each element judged alone.
        classes = [_classify_message(item, 200) for item in body]
        failed = [name for name in classes if name.startswith("unexpected")]
        return failed[0] if failed else "batch answer"
    if not isinstance(body, dict):
        return f"unexpected: HTTP {answer.status} body is not an object"
    if answer.status in REFUSAL_STATUSES and _is_error_object(body.get("error")):
        return f"refusal {answer.status}"
    return _classify_message(body, answer.status)


def _classify_message(body: Any, status: int) -> str:
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        return f"unexpected: HTTP {status} not JSON-RPC"
    if "error" in body:
        return _classify_jsonrpc_error(body["error"], status)
    if "result" in body and status == 200:
        return _classify_result(body["result"])
    return f"unexpected: HTTP {status} neither result nor error"


def _classify_jsonrpc_error(error: Any, status: int) -> str:
    if not _is_error_object(error):
        return "unexpected: malformed JSON-RPC error"
    code = error["code"]
    if code not in JSONRPC_CODES:
        return f"unexpected: JSON-RPC error {code}"
    if status not in (200, 400, 404):
        return f"unexpected: JSON-RPC error {code} with HTTP {status}"
    return f"jsonrpc error {code}"


def _classify_result(result: Any) -> str:
    if not isinstance(result, dict):
        return "unexpected: result is not an object"
    if not result.get("isError"):
        return "result"
    structured = result.get("structuredContent")
    error = structured.get("error") if isinstance(structured, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if code in PINNED_TOOL_CODES:
        return f"tool error {code}"
    return f"unexpected: tool error {code!r}"


def _is_error_object(error: Any) -> bool:
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), int | str)
        and not isinstance(error.get("code"), bool)
        and isinstance(error.get("message"), str)
    )


# --- running --------------------------------------------------------------------------------


def run(
    send: Callable[[FuzzRequest], Answer],
    target: Target,
    *,
    examples: int,
    seed_value: int | None = None,
    time_limit: float | None = None,
) -> Tally:
    """Send `examples` generated requests through `send`, one at a time; classify each answer.

    Deterministic: the same seed (or, without one, hypothesis' derandomized seed) generates the
    same requests. Past `time_limit` seconds the rest are generated but not sent (`skipped`).
    """
    tally = Tally()
    deadline = time.monotonic() + time_limit if time_limit else None

    @settings(
        max_examples=examples,
        derandomize=seed_value is None,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(requests(target))
    def one(request: FuzzRequest) -> None:
        if deadline is not None and time.monotonic() > deadline:
            tally.skipped += 1
            return
        tally.add(request, send(request))

    if seed_value is not None:
        one = seed(seed_value)(one)
    one()
    return tally


def tools_from_list(result: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Tool names and their argument names, from a tools/list result."""
    return {
        tool["name"]: tuple(tool.get("inputSchema", {}).get("properties", {}))
        for tool in result["tools"]
    }


# --- JSON values ------------------------------------------------------------------------------

texts = st.text(max_size=24)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
# Every JSON type, and the edges of the valid ones.
ids = st.one_of(
    st.integers(min_value=-(2**53), max_value=2**53),
    st.integers(min_value=2**64, max_value=2**200),
    st.text(max_size=40),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.just({}),
    st.just([]),
    json_values,
)
KNOWN_METHODS = (
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "prompts/list",
    "logging/setLevel",
    "completion/complete",
    "subscriptions/listen",
)
methods = st.one_of(st.sampled_from(KNOWN_METHODS), texts, json_values)
header_text = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40
)


# --- messages ---------------------------------------------------------------------------------


def tool_arguments(target: Target, name: str) -> st.SearchStrategy[Any]:
    """Arguments for a tool: its own argument names with values of any type, a valid
    write_context now and then, extra names, or not an object at all."""
    names = target.tools.get(name, ())
    value_for = {
        arg: st.one_of(json_values, st.just(target.write_context))
        if arg == "write_context"
        else json_values
        for arg in names
    }
    own = st.fixed_dictionaries({}, optional=value_for) if names else st.just({})
    extra = st.dictionaries(st.text(max_size=12), json_values, max_size=3)
    merged = st.tuples(own, extra).map(lambda pair: {**pair[1], **pair[0]})
    return st.one_of(own, own, merged, json_values)


@st.composite
def tool_call_params(draw: st.DrawFn, target: Target) -> Any:
    known = st.sampled_from(sorted(target.tools))
    name = draw(st.one_of(known, known, known, texts))
    params: dict[str, Any] = {"name": name, "arguments": draw(tool_arguments(target, name))}
    if draw(st.booleans()) and draw(st.booleans()):
        params[draw(st.sampled_from(["name", "arguments", "_meta"]))] = draw(json_values)
    return params


@st.composite
def params_for(draw: st.DrawFn, method: Any, target: Target) -> Any:
    if method == "tools/call":
        return draw(tool_call_params(target))
    if method == "initialize":
        return {
            "protocolVersion": draw(st.one_of(st.sampled_from(HANDSHAKE_VERSIONS), texts)),
            "capabilities": draw(st.one_of(st.just({}), json_values)),
            "clientInfo": draw(st.one_of(st.just({"name": "fuzz", "version": "1"}), json_values)),
        }
    return draw(st.one_of(st.just({}), st.dictionaries(texts, json_values, max_size=3)))


@st.composite
def well_formed(draw: st.DrawFn, target: Target) -> tuple[dict[str, Any], dict[str, str]]:
    """A JSON-RPC message of either era, most fields right; the headers that go with it."""
    # Half of them call a tool: that is where the server does the most with what it gets.
    method = draw(st.one_of(st.just("tools/call"), st.sampled_from(KNOWN_METHODS)))
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if not method.startswith("notifications/"):
        message["id"] = draw(st.one_of(st.integers(0, 10**6), st.text(max_size=12)))
    params = draw(params_for(method, target))
    headers: dict[str, str] = {}
    if draw(st.booleans()):
        headers["MCP-Protocol-Version"] = draw(st.sampled_from(HANDSHAKE_VERSIONS))
    elif isinstance(params, dict):
        # The 2026-07-28 era: the version travels in _meta and in the headers.
        meta = {META_VERSION: MODERN, META_CAPABILITIES: {}}
        params = {**params, "_meta": meta}
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": method})
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str) and name.isascii():
            headers["Mcp-Name"] = name
    message["params"] = params
    return message, headers


@st.composite
def any_message(draw: st.DrawFn, target: Target) -> dict[str, Any]:
    """Every JSON-RPC field present or not, each of any type."""
    method = draw(methods)
    fields: dict[str, st.SearchStrategy[Any]] = {
        "id": ids,
        "method": st.just(method),
        "params": st.one_of(params_for(method, target), json_values),
        "result": json_values,
        "error": st.one_of(
            json_values,
            st.fixed_dictionaries({"code": st.integers(), "message": texts}),
        ),
    }
    jsonrpc = st.one_of(st.just("2.0"), st.just("2.0"), st.just(2.0), json_values)
    return draw(st.fixed_dictionaries({"jsonrpc": jsonrpc}, optional=fields))


# --- bodies -----------------------------------------------------------------------------------

INVALID_UTF8 = (b"\xff", b"\xc3\x28", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80")
RAW_TEXT = (
    '"\\u0000"',
    '"a\\u0000b"',
    '"\\ud800"',
    '"\\udc00\\ud800"',
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    "1" + "0" * 5000,
    "-0",
    "1E400",
    "0.1e-400",
    '"\\x41"',
    "'single'",
)
ENCODINGS = ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig", "latin-1", "cp1252")
HUGE = (10_000, 900_000, 1_100_000, 2_000_000)
BODY_KINDS = (
    *("message",) * 9,
    "random-bytes",
    "truncated",
    "huge-string",
    "deep-nesting",
    "encoding",
    "invalid-utf8",
    "raw-value",
    "batch",
    "bare-value",
    "empty",
)


def _encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _with_placeholder(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    if isinstance(params, dict) and isinstance(params.get("arguments"), dict):
        arguments = {**params["arguments"], "query": PLACEHOLDER}
        return {**message, "params": {**params, "arguments": arguments}}
    return {**message, "params": {"value": PLACEHOLDER}}


def _nested(depth: int, opener: str) -> str:
    if opener == "[":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


@st.composite
def bodies(draw: st.DrawFn, target: Target, message: dict[str, Any]) -> tuple[str, bytes]:
    """(kind, body) around a message: the message itself or something worse."""
    kind = draw(st.sampled_from(BODY_KINDS))
    if kind == "message":
        return kind, _encode(message)
    if kind == "random-bytes":
        return kind, draw(st.binary(max_size=300))
    if kind == "truncated":
        text = _encode(message)
        return kind, text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if kind == "huge-string":
        size = draw(st.sampled_from(HUGE))
        return kind, _encode(_with_placeholder(message)).replace(PLACEHOLDER.encode(), b"a" * size)
    if kind == "deep-nesting":
        depth = draw(st.sampled_from((32, 63, 64, 65, 100, 201, 970, 5000)))
        nested = _nested(depth, draw(st.sampled_from("[{")))
        if draw(st.booleans()):
            return kind, nested.encode()
        text = _encode(_with_placeholder(message))
        return kind, text.replace(f'"{PLACEHOLDER}"'.encode(), nested.encode(), 1)
    if kind == "encoding":
        source = json.dumps(_with_placeholder(message), ensure_ascii=False)
        source = source.replace(PLACEHOLDER, draw(st.sampled_from(["é", "Ωmega", "ÿ", "€", "x"])))
        return kind, source.encode(draw(st.sampled_from(ENCODINGS)), "replace")
    if kind == "invalid-utf8":
        raw = draw(st.sampled_from(INVALID_UTF8))
        return kind, _encode(_with_placeholder(message)).replace(PLACEHOLDER.encode(), raw)
    if kind == "raw-value":
        raw = draw(st.sampled_from(RAW_TEXT)).encode()
        return kind, _encode(_with_placeholder(message)).replace(f'"{PLACEHOLDER}"'.encode(), raw)
    if kind == "batch":
        return kind, _encode(draw(st.lists(st.just(message), max_size=3)))
    if kind == "bare-value":
        return kind, _encode(draw(json_values))
    return kind, draw(st.sampled_from([b"", b" ", b"\n", b"null", b"{}"]))


# --- headers ----------------------------------------------------------------------------------

CONTENT_TYPES = (
    "application/json; charset=utf-8",
    "Application/JSON",
    "application/json;charset=UTF-8",
    None,
    "text/plain",
    "application/x-www-form-urlencoded",
    "application/json; charset=utf-16",
    "application/jsonx",
    "multipart/form-data; boundary=x",
    "*/*",
)
ACCEPTS = (
    "application/json",
    "*/*",
    None,
    "text/event-stream",
    "text/html",
    "application/*",
    "application/json;q=0.5, */*;q=0.1",
)
VERSION_HEADERS = (
    None,
    *HANDSHAKE_VERSIONS,
    MODERN,
    "1999-01-01",
    "latest",
    "2025-11-25, 2025-06-18",
)
FOREIGN_HOSTS = ("evil.example.com", "evil.example.com:8000", "127.0.0.2", "[::1]:1")


def sometimes(one_in: int) -> st.SearchStrategy[bool]:
    """True about once in `one_in` draws (not at hypothesis' favourite edge value)."""
    return st.integers(0, one_in - 1).map(lambda n: n == one_in // 2)


@st.composite
def header_set(draw: st.DrawFn, target: Target, era_headers: dict[str, str]) -> dict[str, str]:
    """The headers a client sends; about half the time every one of them is right, so that the
    body reaches the tools, else any of them may be wrong."""
    headers: dict[str, str | None] = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {target.api_key}",
        **era_headers,
    }
    if draw(st.booleans()):
        return {name: value for name, value in headers.items() if value is not None}
    if draw(sometimes(3)):
        headers["Content-Type"] = draw(st.sampled_from(CONTENT_TYPES))
    if draw(sometimes(3)):
        headers["Accept"] = draw(st.sampled_from(ACCEPTS))
    if draw(sometimes(3)):
        headers["MCP-Protocol-Version"] = draw(
            st.one_of(st.sampled_from(VERSION_HEADERS), header_text)
        )
    if draw(sometimes(4)):
        headers["Mcp-Method"] = draw(st.one_of(st.sampled_from(KNOWN_METHODS), header_text))
    if draw(sometimes(4)):
        headers["Mcp-Name"] = draw(st.one_of(st.sampled_from(sorted(target.tools)), header_text))
    if draw(sometimes(3)):
        headers["Authorization"] = draw(
            st.one_of(
                st.none(),
                st.just("Bearer not-a-token"),
                st.just("Basic dXNlcjpwYXNz"),
                st.just("Bearer hak_000000000000_" + "A" * 43),
                header_text.map(lambda text: f"Bearer {text}"),
                header_text,
            )
        )
    if draw(sometimes(5)):
        headers["Origin"] = draw(
            st.sampled_from([target.origin, "http://evil.example.com", "null", "file://"])
        )
    if draw(sometimes(12)):
        headers["Host"] = draw(st.sampled_from(FOREIGN_HOSTS))
    if draw(sometimes(5)):
        headers["X-Request-ID"] = draw(header_text)
    return {name: value for name, value in headers.items() if value is not None}


@st.composite
def requests(draw: st.DrawFn, target: Target) -> FuzzRequest:
    source = draw(st.sampled_from(("well-formed", "well-formed", "well-formed", "any-message")))
    if source == "well-formed":
        message, era_headers = draw(well_formed(target))
    else:
        message, era_headers = draw(any_message(target)), {}
    kind, body = draw(bodies(target, message))
    kind = source if kind == "message" else kind
    headers = draw(header_set(target, era_headers))
    method = "POST"
    if draw(sometimes(25)):
        method = draw(st.sampled_from(("GET", "DELETE", "PUT", "PATCH", "OPTIONS")))
    return FuzzRequest(
        method=method,
        headers=tuple((name.encode(), value.encode("latin-1")) for name, value in headers.items()),
        body=body,
        kind=kind,
        expects_answer=is_request(body),
    )


def is_request(body: bytes) -> bool:
    """Whether a body is one JSON object with a method and an id (owed an answer, never 202)."""
    try:
        message = json.loads(body.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and "method" in message and "id" in message
