"""What the model behind a client reads of tools/list, held to what the model APIs accept.

Claude Code, Gemini CLI, Codex and every other client hand each tool's name, description and
inputSchema to the model provider. The Messages API refuses a whole request whose tool list has
an input_schema with `anyOf`, `oneOf` or `allOf` at the root; Gemini refuses or skips tools whose
schemas use `$ref`, a `null` union, `default`, `title` or `const`; OpenAI's strict function
calling needs a schema its converter can make strict. No model API can be reached from here, so
every tool, in both protocol eras, is held to:

- the profile (tests/continuity/mcp/profile.py, docs/mcp-transport.md "Tool schemas"): a plain
  closed object at the root, one type per node and never null, no combinator, `$ref`,
  `default`, `title`, `const`, `examples`, `uniqueItems`, open map or `format` but date-time,
  at most 4 levels of nesting, and tool names of the shape every API takes;
- the vendors' own converters: OpenAI's (the Agents SDK's `ensure_strict_json_schema`) and
  Google's (google-genai's `Schema.from_json_schema`, unsupported fields refused): 0 refusals;
- a budget: name + description + inputSchema (+ `_meta`) of every tool, as compact UTF-8 JSON,
  is at most 12,000 bytes in total, and the figure is pinned exactly (see MODEL_VISIBLE_BYTES);
- the server's instructions, which a client that loads tools lazily shows with the tool names
  alone: within Claude Code's 2,048 characters, naming the first-turn tools (which carry
  `anthropic/alwaysLoad`) and what each error code asks.

The two rules the schemas used to state at the root still refuse, here over MCP in both eras
(tests/continuity/api/test_tool_rules.py over REST), with a message that says what to send.
"""

from __future__ import annotations

import copy
from typing import Any

import pydantic
import pytest

from continuity.mcp import schemas
from continuity.mcp.tools import INSTRUCTIONS
from core.errors import ERROR_CODES
from tests.continuity.mcp.eras import ERAS, send, tool_list
from tests.continuity.mcp.harness import EVERY_TOOL, McpWorld
from tests.continuity.mcp.profile import (
    TOOL_NAME,
    gemini_refusal,
    model_visible,
    profile_faults,
    strict_refusal,
)
from tests.live import REPO

# The limit, and today's figure. The figure is pinned exactly so that every change to what a
# model reads is a decision: update it in the same change, and say why it moved. The profile
# took out the null unions and uuid formats and added `_meta` on three tools and the words on
# clearing a field: 11,427 bytes before.
LIMIT = 12_000
MODEL_VISIBLE_BYTES = 11_234
INSTRUCTIONS_LIMIT = 2_048  # characters Claude Code keeps of a server's instructions
FIRST_TURN = ("server_identity", "continuity_context", "task_claim_next")
TOOLS_PAGE = REPO / "docs" / "tools.md"  # states the figure to people


@pytest.mark.parametrize("era", ERAS)
def test_every_tool_schema_keeps_to_the_profile(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    assert tuple(tools) == EVERY_TOOL
    assert all(TOOL_NAME.match(name) for name in tools)
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
def test_gemini_conversion_accepts_every_tool(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    refused = {name: gemini_refusal(tool["inputSchema"]) for name, tool in tools.items()}
    accepted = [name for name, refusal in refused.items() if refusal is None]
    print(f"{era}: google-genai's Gemini conversion accepts {len(accepted)} of {len(tools)} tools")
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
    assert f"is {MODEL_VISIBLE_BYTES:,} bytes for the 13 tools" in TOOLS_PAGE.read_text()


@pytest.mark.parametrize("era", ERAS)
def test_the_first_turn_tools_stay_loaded(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    loaded = {name for name, tool in tools.items() if tool.get("_meta")}
    assert loaded == set(FIRST_TURN)
    for name in FIRST_TURN:
        assert tools[name]["_meta"] == {"anthropic/alwaysLoad": True}


def test_the_instructions_say_what_a_model_needs_before_it_loads_a_tool():
    assert len(INSTRUCTIONS) <= INSTRUCTIONS_LIMIT, len(INSTRUCTIONS)
    # The order of a session, with the arguments of its first calls.
    order = [INSTRUCTIONS.index(name) for name in FIRST_TURN[:2]]
    assert order == sorted(order)
    for words in (
        "task_claim_next(write_context, session_ref)",
        "expected_version",
        "write_context",
    ):
        assert words in INSTRUCTIONS
    # Every code a tools/call can answer says what to do (unauthenticated is an HTTP 401).
    for code in set(ERROR_CODES) - {"unauthenticated"}:
        assert f"{code}:" in INSTRUCTIONS or f"{code}," in INSTRUCTIONS, code


# --- the checks fail on what the model APIs refuse ---------------------------------------------


def test_the_checks_catch_what_model_apis_refuse(mcp_world: McpWorld):
    """A real schema with a `default`, a null union or a `$ref` put back fails the profile; the
    converters refuse the shapes this server used to advertise."""
    real = tool_list(mcp_world, ERAS[0])["task_update"]["inputSchema"]
    assert profile_faults(real) == []

    def with_(change: Any) -> dict[str, Any]:
        schema = copy.deepcopy(real)
        change(schema["properties"])
        return schema

    put_back = {
        "default": with_(lambda p: p["next_step"].update(default="")),
        "null union": with_(lambda p: p["next_step"].update(type=["string", "null"])),
        "null in an enum": with_(lambda p: p["status"]["enum"].append(None)),
        "$ref": with_(lambda p: p.update(work_receipt={"$ref": "#/$defs/WorkReceiptInput"})),
        "anyOf": with_(lambda p: p.update(status={"anyOf": [{"type": "string"}]})),
        "title": with_(lambda p: p["next_step"].update(title="Next step")),
        "uuid format": with_(lambda p: p["task_id"].update(format="uuid")),
        "open object": with_(lambda p: p["repository_ref"].pop("additionalProperties")),
        "deep nesting": with_(
            lambda p: p["work_receipt"]["properties"]["tests"]["items"]["properties"].update(
                more={"type": "array", "items": {"type": "string"}}
            )
        ),
    }
    for name, schema in put_back.items():
        assert profile_faults(schema), name
    assert "default in a schema node" in profile_faults(put_back["default"])

    closed: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    closed.update(required=[], additionalProperties=False)
    assert strict_refusal(closed) is None
    assert gemini_refusal(closed) is None
    assert strict_refusal({**closed, "anyOf": [{"required": ["a"]}]}) is not None
    union = {**closed, "properties": {"a": {"type": ["string", "integer"]}}}
    assert gemini_refusal(union) is not None  # it splits the union, with a warning
    assert gemini_refusal({**closed, "if": {"required": ["a"]}}) is not None
    unique = {**closed, "properties": {"a": {"type": "array", "uniqueItems": True}}}
    assert gemini_refusal(unique) is not None
    field_named_not = {**closed, "properties": {"not": {"type": "string"}}}
    assert profile_faults(field_named_not) == []


class _Ref(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    name: str = "x"


class _Generated(pydantic.BaseModel):
    # What pydantic makes of the shapes the profile excludes, through the server's generator.
    model_config = pydantic.ConfigDict(extra="forbid")
    title: str = "a default and a title"
    maybe: int | None = None
    ref: _Ref | None = None
    kind: pydantic.UUID4 | None = None


def test_the_generator_keeps_pydantic_schemas_in_the_profile():
    raw = _Generated.model_json_schema()
    assert profile_faults(raw)  # $defs, defaults, titles, null unions, a uuid format
    generated = schemas.input_schema(_Generated)
    assert profile_faults(generated) == []
    assert strict_refusal(generated) is None
    assert gemini_refusal(generated) is None
    assert generated["required"] == []  # an optional field is one left out of required


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
        (
            "status",
            "next_step",
            "blockers",
            "blocked_by",
            "handoff_note",
            "repository_ref",
            "work_receipt",
        )
    )
    for arguments in (update, {**update, **every_null}):
        error = tool_error(mcp_world, era, "task_update", arguments)
        assert error["code"] == "validation_error"
        assert error["message"] == (
            "Nothing to update: give at least one of status, next_step, blockers, blocked_by, "
            "handoff_note, repository_ref or work_receipt (a null is no change)."
        )
        assert error["fields"] == {"arguments": "n" + error["message"][1:-1]}
