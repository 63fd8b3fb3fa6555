"""A tools/call the endpoint answers itself (continuity.mcp.wire) gets exactly the answer the
SDK's session manager gives the same request: status, headers that matter and body, byte for
byte, at every handshake-era revision, for results, tool errors, refusals and a call without
arguments. What the endpoint leaves alone (the 2026 era, a request the SDK refuses) still
reaches the SDK."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from continuity.mcp import asgi, jsonrpc, wire
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.continuity.mcp.inprocess import InProcessServer, in_process_server
from tests.factories import build_world

HANDSHAKE_VERSIONS = [None, "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


class Keys:
    def __init__(self) -> None:
        world = build_world()
        operator = operator_caller(world.alpha)

        def key(scopes: list[str]) -> str:
            issued = api_key_create(operator, user_id=world.owner.pk, label="direct", scopes=scopes)
            return issued.secret

        self.writer = key(["continuity:read", "continuity:write"])
        self.reader = key(["continuity:read"])


@pytest.fixture
def served(transactional_db: Any) -> Iterator[tuple[InProcessServer, Keys]]:
    keys = Keys()
    with in_process_server() as server:
        yield server, keys


def headers_for(key: str, version: str | None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {key}",
    }
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    return headers


def call(name: str, arguments: dict[str, Any] | None, request_id: int | str = 7) -> bytes:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


def answer(server: InProcessServer, body: bytes, headers: dict[str, str]) -> tuple[Any, ...]:
    response = server.portal.call(lambda: server.http.post("/mcp", content=body, headers=headers))
    return (
        response.status_code,
        response.headers.get("content-type"),
        response.headers.get("www-authenticate"),
        response.headers.get("retry-after"),
        response.content,
    )


def through_both(
    server: InProcessServer,
    monkeypatch: pytest.MonkeyPatch,
    body: bytes,
    headers: dict[str, str],
) -> tuple[tuple[Any, ...], tuple[Any, ...], int]:
    """The answer with the direct path, the answer through the SDK alone, and how many of the
    two requests the direct path took."""
    taken = []

    def counted(envelope: jsonrpc.Envelope) -> wire.HandshakeCall | None:
        found = wire.handshake_call(envelope)
        taken.append(found is not None)
        return found

    with monkeypatch.context() as patched:
        patched.setattr(asgi, "handshake_call", counted)
        directly = answer(server, body, headers)
    with monkeypatch.context() as patched:
        patched.setattr(asgi, "handshake_call", lambda envelope: taken.append(False))
        by_sdk = answer(server, body, headers)
    return directly, by_sdk, sum(taken)


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_results_and_tool_errors_are_the_sdks_byte_for_byte(served, monkeypatch, version):
    server, keys = served
    headers = headers_for(keys.writer, version)
    memory = {"kind": "note", "title": "Direct", "content": "Same bytes.", "idempotency_key": "k1"}
    answer(server, call("memory_add", memory), headers)  # the next ones replay it
    cases = [
        call("server_identity", {}),
        call("server_identity", None, request_id="a-string-id"),
        call("memory_add", memory),
        call("memory_search", {"query": 5}),  # validation_error result
        call("task_get", {"task_id": str(uuid.uuid4())}),  # not_found result
        call("task_list", {"status": "open", "unexpected": True}),
    ]
    for body in cases:
        directly, by_sdk, taken = through_both(server, monkeypatch, body, headers)
        assert directly == by_sdk, body
        assert directly[0] == 200
        assert taken == 1, body


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_refusals_are_the_sdks_byte_for_byte(served, monkeypatch, version):
    server, keys = served
    memory = {"kind": "note", "title": "Refused", "content": "Never stored."}
    cases = [
        # A bad key: 401 with its challenge, whichever path would have answered.
        (headers_for("hak_000000000000_" + "x" * 43, version), call("server_identity", {})),
        # A read-only key writing: the step-up 403.
        (headers_for(keys.reader, version), call("memory_add", memory)),
    ]
    for headers, body in cases:
        directly, by_sdk, _ = through_both(server, monkeypatch, body, headers)
        assert directly == by_sdk
        assert directly[0] in (401, 403)
        assert directly[2]  # the challenge


def envelope(body: bytes, version: str | None) -> jsonrpc.Envelope:
    headers = [(k.lower().encode(), v.encode()) for k, v in headers_for("k", version).items()]
    checked = jsonrpc.check_request(headers, body)
    assert isinstance(checked, jsonrpc.Envelope)
    return checked


def test_what_the_direct_path_leaves_to_the_sdk():
    assert wire.handshake_call(envelope(call("server_identity", {}), "2025-11-25")) is not None
    # The 2026 era has its own rules (headers, _meta): the SDK serves it.
    assert wire.handshake_call(envelope(call("server_identity", {}), "2026-07-28")) is None
    # A version the SDK refuses with 400.
    assert wire.handshake_call(envelope(call("server_identity", {}), "1999-01-01")) is None
    # Params the revision's surface refuses (the SDK's INVALID_PARAMS answer).
    bad = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}'
    assert wire.handshake_call(envelope(bad, "2025-11-25")) is None
    # A notification is not a call.
    note = b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"server_identity"}}'
    assert wire.handshake_call(envelope(note, "2025-11-25")) is None
