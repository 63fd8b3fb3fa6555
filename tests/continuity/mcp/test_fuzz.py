"""A bounded fuzz of /mcp through the real ASGI application (tests/continuity/mcp/fuzzing.py says
what is generated and what is allowed back): no answer may fall outside the allowed classes."""

from __future__ import annotations

import time
from typing import Any

import pytest

from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.continuity.mcp import fuzzing
from tests.continuity.mcp.inprocess import BASE_URL, HOST, InProcessServer, in_process_server
from tests.factories import build_world

EXAMPLES = 500
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
# Classes a fuzz that reaches every layer must produce (each layer's answer at least once).
REACHED = (
    "result",
    "tool error validation_error",
    "jsonrpc error -32700",
    "jsonrpc error -32600",
    "jsonrpc error -32601",
    "jsonrpc error -32602",
    "accepted (202)",
    "refusal 401",
    "refusal 405",
    "refusal 406",
    "refusal 413",
    "refusal 415",
)


def discover(server: InProcessServer, api_key: str) -> fuzzing.Target:
    headers = {**HEADERS, "Authorization": f"Bearer {api_key}"}
    tools = server.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers).json()
    identity = server.post(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "server_identity", "arguments": {}},
        },
        headers,
    ).json()
    return fuzzing.Target(
        host=HOST,
        origin=BASE_URL,
        api_key=api_key,
        tools=fuzzing.tools_from_list(tools["result"]),
        write_context=identity["result"]["structuredContent"]["write_context"],
    )


def owner_key() -> str:
    world = build_world()
    issued = api_key_create(
        operator_caller(world.alpha),
        user_id=world.owner.pk,
        label="fuzz",
        scopes=["continuity:read", "continuity:write"],
    )
    return issued.secret


def test_no_hostile_request_gets_an_answer_outside_the_allowed_classes(
    transactional_db: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    key = owner_key()
    with in_process_server() as server:
        target = discover(server, key)
        started = time.monotonic()
        tally = fuzzing.run(server.send, target, examples=EXAMPLES)
        elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"\n/mcp fuzz, in process: {tally.total} requests in {elapsed:.1f} s")
        print(tally.report())
    assert tally.failures == 0, tally.report()
    assert tally.total == EXAMPLES
    missing = [name for name in REACHED if tally.classes[name] == 0]
    assert not missing, f"never reached: {missing}\n{tally.report()}"
