"""What the model behind a client reads of tools/list, held to what the model APIs accept.

Claude Code, Claude Desktop and every client on the Anthropic API hand each tool's name,
description and inputSchema to the model provider. The Messages API refuses a whole request
whose tool list has an input_schema with `anyOf`, `oneOf` or `allOf` at the root, and Claude
Code drops tools whose root carries `allOf`/`if`/`then`; OpenAI's strict function calling needs a
schema its converter can make strict. No model API can be reached from here, so every tool, in
both protocol eras, is held to:

- the profile: the root is exactly `type: object`, `properties`, `required` and
  `additionalProperties: false`; nowhere a keyword these APIs refuse inside a tool schema
  (`oneOf`, `allOf`, `not`, `if`/`then`/`else`, `$ref`); a nested `anyOf` is accepted by both;
  every object closed with `additionalProperties: false`, as OpenAI's strict mode requires;
- the OpenAI Agents SDK's own converter, `agents.strict_schema.ensure_strict_json_schema`,
  which raises on what strict mode cannot take (it mutates its argument: it gets a copy);
- a budget: name + description + inputSchema of every tool, as compact UTF-8 JSON, is at most
  12,000 bytes in total, and the figure is pinned exactly (see MODEL_VISIBLE_BYTES).

The two rules the schemas used to state at the root still refuse, here over MCP in both eras
(tests/continuity/api/test_tool_rules.py over REST), with a message that says what to send.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from agents.exceptions import UserError
from agents.strict_schema import ensure_strict_json_schema

from tests.continuity.mcp.eras import ERAS, send, tool_list
from tests.continuity.mcp.harness import EVERY_TOOL, McpWorld

ROOT_KEYS = {"type", "properties", "required", "additionalProperties"}
# Refused by a model API, or by OpenAI's strict mode, anywhere in a tool schema.
REFUSED_ANYWHERE = ("oneOf", "allOf", "not", "if", "then", "else", "$ref", "$defs", "$schema")
# The limit, and today's figure. The figure is pinned exactly so that every change to what a
# model reads is a decision: update it in the same change, and say why it grew. Leases took
# 1,436 bytes: task_heartbeat, and session_ref and lease_seconds on task_update and
# task_claim_next, with their descriptions.
LIMIT = 12_000
MODEL_VISIBLE_BYTES = 11_427


def model_visible(tool: dict[str, Any]) -> bytes:
    seen = {key: tool[key] for key in ("name", "description", "inputSchema")}
    return json.dumps(seen, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def subschemas(schema: Any) -> list[dict[str, Any]]:
    """Every schema node under `schema` (itself included), never a property *name*: a field
    called `not` or `if` is a property, not a keyword."""
    nodes: list[dict[str, Any]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        nodes.append(node)
        for key, value in node.items():
            if key in ("properties", "patternProperties", "$defs"):
                stack.extend(value.values())
            elif key in ("items", "additionalProperties", "not", "if", "then", "else"):
                stack.append(value)
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
                stack.extend(value)
    return nodes


def profile_faults(schema: dict[str, Any]) -> list[str]:
    """Why a tool's inputSchema is not portable, or []."""
    faults = []
    if set(schema) != ROOT_KEYS:
        faults.append(f"root keys {sorted(schema)}, not {sorted(ROOT_KEYS)}")
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        faults.append("root is not a closed object")
    if not set(schema.get("required", [])) <= set(schema.get("properties", {})):
        faults.append("root requires a property it does not declare")
    for node in subschemas(schema):
        faults += [f"{key} in a schema node" for key in REFUSED_ANYWHERE if key in node]
        kind = node.get("type")
        is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
        if is_object and node.get("additionalProperties") is not False:
            faults.append(f"an open object: {sorted(node.get('properties', {}))}")
    return faults


def strict_refusal(schema: dict[str, Any]) -> str | None:
    try:
        ensure_strict_json_schema(copy.deepcopy(schema))
    except (UserError, ValueError, TypeError) as refusal:
        return str(refusal)
    return None


@pytest.mark.parametrize("era", ERAS)
def test_every_tool_schema_is_a_plain_closed_object(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    assert tuple(tools) == EVERY_TOOL
    faults = {name: profile_faults(tool["inputSchema"]) for name, tool in tools.items()}
    assert not {name: found for name, found in faults.items() if found}


@pytest.mark.parametrize("era", ERAS)
def test_openai_strict_conversion_accepts_every_tool(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    refused = {name: strict_refusal(tool["inputSchema"]) for name, tool in tools.items()}
    accepted = [name for name, refusal in refused.items() if refusal is None]
    print(f"{era}: the OpenAI strict converter accepts {len(accepted)} of {len(tools)} tools")
    assert len(accepted) == len(EVERY_TOOL), {k: v for k, v in refused.items() if v}


@pytest.mark.parametrize("era", ERAS)
def test_what_a_model_reads_fits_the_budget(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    sizes = {name: len(model_visible(tool)) for name, tool in tools.items()}
    total = sum(sizes.values())
    for name, size in sizes.items():
        print(f"{era} {name:18} {size:6,} bytes")
    print(f"{era} model-visible tools/list: {total:,} bytes (limit {LIMIT:,})")
    assert total <= LIMIT
    assert total == MODEL_VISIBLE_BYTES, "what a model reads changed: update the pin, on purpose"


def test_the_checks_catch_what_model_apis_refuse():
    """The profile and the converter, on the two shapes this server used to advertise."""
    closed: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    closed.update(required=[], additionalProperties=False)
    any_of = {**closed, "anyOf": [{"required": ["a"]}]}
    conditional = {**closed, "if": {"properties": {"a": {"const": "x"}}}, "then": {}}
    assert profile_faults(closed) == []
    assert strict_refusal(closed) is None
    assert profile_faults(any_of)
    assert strict_refusal(any_of) is not None
    assert profile_faults(conditional)  # the converter lets if/then through; the profile does not
    nested = {**closed, "properties": {"a": {"oneOf": [{"type": "string"}]}}}
    assert profile_faults(nested) == ["oneOf in a schema node"]
    field_named_not = {**closed, "properties": {"not": {"type": "string"}}}
    assert profile_faults(field_named_not) == []


# --- the rules the schemas leave to the server -------------------------------------------------


def tool_error(world: McpWorld, era: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = send(world, era, "tools/call", {"name": name, "arguments": arguments}).json()
    result = answer["result"]
    assert result["isError"] is True, result
    error: dict[str, Any] = result["structuredContent"]["error"]
    return error


def write_context(world: McpWorld, era: str) -> dict[str, str]:
    answer = send(world, era, "tools/call", {"name": "server_identity", "arguments": {}}).json()
    context: dict[str, str] = answer["result"]["structuredContent"]["write_context"]
    return context


@pytest.mark.parametrize("era", ERAS)
def test_a_decision_without_rationale_or_source_is_refused_with_what_to_send(
    mcp_world: McpWorld, era: str
):
    decision = {"write_context": write_context(mcp_world, era), "kind": "decision"}
    error = tool_error(mcp_world, era, "memory_add", {**decision, "content": "Use PostgreSQL."})
    assert error["code"] == "validation_error"
    assert error["fields"] == {
        "rationale": "is required for a decision",
        "source": "is required for a decision",
    }
    assert error["message"] == (
        "A decision needs rationale (why) and source (where it was decided): send rationale "
        "and source, or record it as kind 'note'."
    )
    blank = {**decision, "content": "x", "rationale": "Because.", "source": "  "}
    error = tool_error(mcp_world, era, "memory_add", blank)
    assert error["fields"] == {"source": "is required for a decision"}
    assert "send source, or record it as kind 'note'" in error["message"]


@pytest.mark.parametrize("era", ERAS)
def test_a_task_update_that_changes_nothing_is_refused_with_what_to_send(
    mcp_world: McpWorld, era: str
):
    context = write_context(mcp_world, era)
    created = send(
        mcp_world,
        era,
        "tools/call",
        {
            "name": "task_create",
            "arguments": {"write_context": context, "title": "t", "description": "d"},
        },
    ).json()["result"]["structuredContent"]
    update = {"write_context": context, "task_id": created["id"], "expected_version": 1}
    # Nothing at all, and every change given as null (what a strict-mode model sends): no change.
    every_null = dict.fromkeys(
        ("status", "next_step", "blockers", "blocked_by", "handoff_note", "work_receipt")
    )
    for arguments in (update, {**update, **every_null}):
        error = tool_error(mcp_world, era, "task_update", arguments)
        assert error["code"] == "validation_error"
        assert error["message"] == (
            "Nothing to update: give at least one of status, next_step, blockers, blocked_by, "
            "handoff_note, repository_ref or work_receipt (a null is no change)."
        )
        assert error["fields"] == {"arguments": "n" + error["message"][1:-1]}
