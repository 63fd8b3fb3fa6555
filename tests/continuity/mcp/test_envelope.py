"""What /mcp answers before any tool runs: the JSON-RPC envelope (continuity.mcp.jsonrpc) and
client text that a database cannot hold. Each case was an HTTP 500, a plain-text answer, a 202
or a -32603 before; each answer now is a JSON-RPC error object or a pinned tool error."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from audit.models import AuditEvent
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.continuity.mcp.inprocess import InProcessServer, in_process_server
from tests.continuity.mcp.test_fuzz import discover, owner_key
from tests.factories import build_world

ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def mcp(transactional_db: Any) -> Iterator[tuple[InProcessServer, dict[str, str]]]:
    key = owner_key()
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": "2025-11-25",
        "Authorization": f"Bearer {key}",
    }
    with in_process_server() as server:
        yield server, headers


def raw(server: InProcessServer, body: bytes, headers: dict[str, str]) -> Any:
    return server.portal.call(lambda: server.http.post("/mcp", content=body, headers=headers))


def jsonrpc_error(response: Any) -> tuple[int, Any, int]:
    assert response.headers["content-type"].startswith("application/json"), response.text
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    return response.status_code, body["id"], body["error"]["code"]


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_it_refuses_a_body_nested_970_levels_as_a_parse_error(mcp, opener: str):
    server, headers = mcp
    closer = "]" if opener == "[" else "}"
    inner = opener * 970 + ("1" if opener != "[" else "") + closer * 970
    for body in (inner, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + inner + "}"):
        assert jsonrpc_error(raw(server, body.encode(), headers)) == (400, None, -32700)


def test_it_accepts_64_levels_and_refuses_65(mcp):
    server, headers = mcp

    def call(depth: int) -> Any:
        # The message object is level 1, params 2, arguments 3: the rest nests in a value.
        nested = "[" * (depth - 3) + "]" * (depth - 3)
        arguments = '{"query":' + nested + "}"
        body = (
            '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":'
            '{"name":"memory_search","arguments":' + arguments + "}}"
        )
        return raw(server, body.encode(), headers)

    kept = call(64).json()
    assert kept["result"]["structuredContent"]["error"]["code"] == "validation_error"
    assert jsonrpc_error(call(65)) == (400, None, -32700)


@pytest.mark.parametrize("request_id", ["true", "1.5", "{}", "[]", "null", "false"])
def test_it_refuses_a_request_whose_id_is_not_a_string_or_an_integer(mcp, request_id: str):
    server, headers = mcp
    body = f'{{"jsonrpc":"2.0","id":{request_id},"method":"ping"}}'.encode()
    assert jsonrpc_error(raw(server, body, headers)) == (400, None, -32600)


@pytest.mark.parametrize(
    "body",
    [
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        b"[]",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","error":{"code":1,"message":"x"}}',
        b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
        b'{"id":1,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1,"method":7}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping\\u0000\\nforged log line"}',
        b'{"jsonrpc":"2.0","id":1}',
        b'"ping"',
    ],
)
def test_it_answers_what_is_not_one_jsonrpc_message_with_invalid_request(mcp, body: bytes):
    server, headers = mcp
    status, _, code = jsonrpc_error(raw(server, body, headers))
    assert (status, code) == (400, -32600)


# --- batches: only where the revision has them -------------------------------------------


@pytest.mark.parametrize("version", ["2025-03-26", "2024-11-05", None])
def test_it_serves_a_batch_at_the_revisions_that_have_them(mcp, version: str | None):
    server, headers = mcp
    headers = {k: v for k, v in {**headers, "MCP-Protocol-Version": version}.items() if v}
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "task_list"}},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        [{"jsonrpc": "2.0", "id": 2, "method": "ping"}],
    ]
    answer = raw(server, json.dumps(batch).encode(), headers)
    assert answer.status_code == 200
    first, listed, bad_id, nested = answer.json()
    assert first == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert listed["id"] == "b"
    assert "tasks" in listed["result"]["structuredContent"]
    assert (bad_id["id"], bad_id["error"]["code"]) == (None, -32600)
    assert (nested["id"], nested["error"]["code"]) == (None, -32600)


def test_a_batch_of_notifications_is_accepted_without_a_body(mcp):
    server, headers = mcp
    headers = {**headers, "MCP-Protocol-Version": "2025-03-26"}
    batch = [{"jsonrpc": "2.0", "method": "notifications/initialized"}] * 2
    answer = raw(server, json.dumps(batch).encode(), headers)
    assert (answer.status_code, answer.content) == (202, b"")


@pytest.mark.parametrize("size", [0, 51])
def test_it_refuses_an_empty_or_oversized_batch(mcp, size: int):
    server, headers = mcp
    headers = {**headers, "MCP-Protocol-Version": "2025-03-26"}
    batch = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(size)]
    assert jsonrpc_error(raw(server, json.dumps(batch).encode(), headers)) == (400, None, -32600)


def test_a_step_up_in_a_batch_refuses_the_whole_batch(transactional_db):
    world = build_world()
    secret = api_key_create(
        operator_caller(world.alpha), user_id=world.owner.pk, label="r", scopes=["continuity:read"]
    ).secret
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": "2025-03-26",
        "Authorization": f"Bearer {secret}",
    }
    write = {"name": "memory_add", "arguments": {"kind": "note", "content": "x"}}
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": write},
    ]
    with in_process_server() as server:
        answer = raw(server, json.dumps(batch).encode(), headers)
    assert answer.status_code == 403
    assert 'error="insufficient_scope"' in answer.headers["www-authenticate"]
    assert AuditEvent.objects.filter(operation="memory_add", error_code="forbidden").count() == 1


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{not json",
        b'{"jsonrpc":"2.0","id":1,"method":"ping"',
        '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"),
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":"é"}}'.encode("latin-1"),
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":"\xed\xa0\x80"}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":"\\ud800"}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":1e999}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"q":NaN}}',
    ],
)
def test_it_answers_what_is_not_json_with_a_parse_error(mcp, body: bytes):
    server, headers = mcp
    assert jsonrpc_error(raw(server, body, headers)) == (400, None, -32700)


def test_it_ignores_a_utf8_byte_order_mark(mcp):
    server, headers = mcp
    answer = raw(server, b'\xef\xbb\xbf{"jsonrpc":"2.0","id":3,"method":"ping"}', headers)
    assert answer.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({"Content-Type": None}, 415),
        ({"Content-Type": "text/plain"}, 415),
        ({"Content-Type": "application/json; charset=latin-1"}, 415),
        ({"Accept": "text/html"}, 406),
        ({"Accept": "text/event-stream"}, 406),
        ({"Accept": None}, 406),
    ],
)
def test_it_refuses_wrong_headers_with_a_json_body(mcp, changes: dict, status: int):
    server, headers = mcp
    sent = {k: v for k, v in {**headers, **changes}.items() if v is not None}
    request = server.http.build_request(
        "POST", "/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}', headers=sent
    )
    if "Accept" not in sent:
        del request.headers["accept"]  # httpx would send */*
    answer = server.portal.call(server.http.send, request)
    # The refusal echoes the id of the message the body holds.
    assert jsonrpc_error(answer) == (status, 1, -32600)


def test_a_header_refusal_echoes_no_id_when_the_body_has_no_valid_one(mcp):
    server, headers = mcp
    for body in (b"not json", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', b"[1]"):
        answer = raw(server, body, {**headers, "Accept": "text/html"})
        assert jsonrpc_error(answer) == (406, None, -32600), body


def modern_headers(headers: dict[str, str], method: str) -> dict[str, str]:
    return {**headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "envelope-test", "version": "1"},
}


def test_it_trims_the_whitespace_around_header_values(mcp):
    """RFC 9110 section 5.5: optional whitespace around a field value is not part of it.
    uvicorn's httptools parser keeps it, as this in-process server does."""
    server, headers = mcp
    params = {"name": "server_identity", "arguments": {}, "_meta": MODERN_META}
    message = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}
    sent = {
        **headers,
        "MCP-Protocol-Version": "2026-07-28 ",
        "Mcp-Method": "\ttools/call",
        "Mcp-Name": "  server_identity  ",
    }
    answer = raw(server, json.dumps(message).encode(), sent)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["write_context"]


def test_it_accepts_json_with_a_utf8_charset_in_any_case(mcp):
    server, headers = mcp
    headers = {**headers, "Content-Type": "Application/JSON; charset=UTF-8"}
    answer = raw(server, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', headers)
    assert answer.json()["result"] == {}


def test_it_answers_a_2026_listen_request_as_a_server_with_nothing_to_subscribe_to(mcp):
    """No listChanged or subscribe capability, no event streams: subscriptions/listen is a
    method this server does not implement, which 2026-07-28 answers with 404 and -32601."""
    server, headers = mcp
    method = "subscriptions/listen"
    params = {"_meta": MODERN_META, "notifications": {"toolsListChanged": True}}
    message = {"jsonrpc": "2.0", "id": "listen-1", "method": method, "params": params}
    answer = raw(server, json.dumps(message).encode(), modern_headers(headers, method))
    assert jsonrpc_error(answer) == (404, "listen-1", -32601)
    assert answer.json()["error"]["data"] == method
    discover = {"jsonrpc": "2.0", "id": 2, "method": "server/discover"}
    discover["params"] = {"_meta": MODERN_META}
    found = raw(server, json.dumps(discover).encode(), modern_headers(headers, "server/discover"))
    capabilities = found.json()["result"]["capabilities"]
    assert "resources" not in capabilities
    assert not capabilities["prompts"].get("listChanged")  # one fixed prompt, resume
    assert not capabilities["tools"].get("listChanged")


# --- text a database cannot hold ------------------------------------------------------------


def call(server: InProcessServer, headers: dict[str, str], name: str, arguments: Any) -> Any:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return server.post(message, headers)


def test_it_answers_and_audits_an_unknown_tool_whose_name_holds_nul(mcp):
    server, headers = mcp
    request_id = uuid.uuid4().hex
    answer = call(server, {**headers, "X-Request-ID": request_id}, "drop\x00table", {})
    assert answer.status_code == 200
    assert answer.json()["error"] == {"code": -32602, "message": "Unknown tool: drop\\x00table"}
    event = AuditEvent.objects.get(request_id=request_id)
    assert (event.operation, event.outcome, event.error_code, event.target_id) == (
        "tools_call",
        "rejected",
        "unknown_tool",
        "drop\\x00table",
    )


def string_arguments(tools: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(tool, argument, whether the tool takes write_context) for every argument that may be a
    string (work_receipt's strings are checked through task_update's own validation)."""
    for tool in tools["tools"]:
        properties = tool["inputSchema"].get("properties", {})
        for name, schema in properties.items():
            if "string" in json.dumps(schema) and name != "write_context":
                yield tool["name"], name, "write_context" in properties


def test_nul_in_any_string_argument_is_a_validation_error_naming_it(mcp):
    server, headers = mcp
    target = discover(server, headers["Authorization"].removeprefix("Bearer "))
    tools = server.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers).json()
    checked = []
    for tool, argument, writes in string_arguments(tools["result"]):
        arguments: dict[str, Any] = {argument: "a\x00b"}
        if writes:
            arguments["write_context"] = target.write_context
        result = call(server, headers, tool, arguments).json()["result"]
        error = result["structuredContent"]["error"]
        assert result["isError"], (tool, argument, error)
        assert error["code"] == "validation_error", (tool, argument, error)
        assert argument in error["fields"], (tool, argument, error)
        checked.append(f"{tool}.{argument}")
    assert len(checked) > 15, checked


def test_nul_in_a_work_receipt_is_a_validation_error(mcp):
    server, headers = mcp
    target = discover(server, headers["Authorization"].removeprefix("Bearer "))
    receipt = {"session_ref": "s\x00", "summary": "done\x00", "commits": ["a\x00"]}
    arguments = {
        "write_context": target.write_context,
        "task_id": str(uuid.uuid4()),
        "expected_version": 1,
        "work_receipt": receipt,
    }
    error = call(server, headers, "task_update", arguments).json()["result"]["structuredContent"]
    assert error["error"]["code"] == "validation_error"
    assert {"work_receipt.session_ref", "work_receipt.summary"} <= set(error["error"]["fields"])


@pytest.mark.parametrize("versions", [["1999-01-01"], ["2026-07-28", "2026-07-28"]])
def test_a_listen_request_the_2026_entry_would_take_is_refused_as_a_jsonrpc_error(
    mcp, versions: list[str]
):
    """At an unknown version, or with the version header twice, the SDK's 2026-era entry would
    refuse the endpoint's JSON-only Accept with a bare 406: the endpoint says so itself, as a
    JSON-RPC error with the request's id."""
    server, headers = mcp
    message = {"jsonrpc": "2.0", "id": "listen-2", "method": "subscriptions/listen"}
    sent = [(k, v) for k, v in headers.items() if k != "MCP-Protocol-Version"]
    sent += [("MCP-Protocol-Version", version) for version in versions]
    sent.append(("Mcp-Method", "subscriptions/listen"))
    answer = server.portal.call(
        lambda: server.http.post("/mcp", content=json.dumps(message).encode(), headers=sent)
    )
    assert jsonrpc_error(answer) == (406, "listen-2", -32600)
