"""Every tool result says everything in `structuredContent`, and `content` says nothing else.

Claude Code shows the model only `structuredContent` when a result has it (the text in `content`
is dropped); clients that read only text get `content`. So for every tool, its result and its
refusal, in both protocol eras: `content` is one text block, and that text is the JSON of
`structuredContent`, exactly. A next step, a warning or a count of what was left out can then
only be in `structuredContent`, where every client reads it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.continuity.mcp.eras import ERAS, send
from tests.continuity.mcp.harness import EVERY_TOOL, McpWorld

pytestmark = pytest.mark.live_server


def whole(result: dict[str, Any]) -> dict[str, Any]:
    """The result's structuredContent, after checking that content holds nothing more."""
    structured = result["structuredContent"]
    assert isinstance(structured, dict)
    (block,) = result["content"]
    assert set(block) == {"type", "text"}, block
    assert block["type"] == "text"
    assert json.loads(block["text"]) == structured
    return structured


def session_calls(wc: dict[str, str], tag: str) -> list[tuple[str, Callable[..., Any]]]:
    """Each tool once as a session calls it, in an order where each finds what it needs (the
    ids of earlier results, passed in `seen`)."""
    session = f"session-{tag}"

    def task_update(seen: dict[str, Any]) -> dict[str, Any]:
        claim = {"status": "in_progress", "session_ref": session, "next_step": "Test it."}
        return {"write_context": wc, "task_id": seen["task"], "expected_version": 1, **claim}

    return [
        ("server_identity", lambda seen: {}),
        (
            "state_put",
            lambda seen: {"write_context": wc, "agent": tag, "body": "# Running summary\n- x"},
        ),
        ("memory_add", lambda seen: {"write_context": wc, "kind": "note", "content": f"n {tag}"}),
        ("memory_get", lambda seen: {"memory_id": seen["memory_add"]["id"]}),
        ("memory_search", lambda seen: {"query": tag}),
        ("task_create", lambda seen: {"write_context": wc, "title": tag, "description": "d"}),
        ("task_get", lambda seen: {"task_id": seen["task"]}),
        ("task_list", lambda seen: {"status": "open", "limit": 5}),
        ("task_update", task_update),
        (
            "task_heartbeat",
            lambda seen: {"write_context": wc, "task_id": seen["task"], "session_ref": session},
        ),
        ("task_claim_next", lambda seen: {"write_context": wc, "session_ref": f"other-{tag}"}),
        ("continuity_context", lambda seen: {"agent": tag}),
        ("state_get", lambda seen: {"agent": tag}),
    ]


@pytest.mark.parametrize("era", ERAS)
def test_every_result_and_every_refusal_is_whole_in_structured_content(
    mcp_world: McpWorld, era: str
):
    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = send(mcp_world, era, "tools/call", {"name": name, "arguments": arguments})
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()["result"]
        return result

    wc = whole(call("server_identity", {}))["write_context"]
    tag = uuid.uuid4().hex[:8]
    seen: dict[str, Any] = {}
    calls = session_calls(wc, tag)
    assert sorted(name for name, _ in calls) == sorted(EVERY_TOOL)
    for name, arguments in calls:
        result = call(name, arguments(seen))
        assert not result.get("isError"), (name, result)
        seen[name] = whole(result)
        if name == "task_create":
            seen["task"] = seen[name]["id"]
    # Every tool's refusal too: an unknown field is a validation_error for each.
    for name in EVERY_TOOL:
        refused = call(name, {"no_such_field": 1})
        assert refused["isError"] is True, (name, refused)
        assert whole(refused)["error"]["code"] == "validation_error", name
