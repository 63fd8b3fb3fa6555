"""The advertised schemas say what the server accepts and returns, in both protocol eras.

Every inputSchema and outputSchema is a valid JSON Schema 2020-12. An inputSchema is what a
model reads, so it leaves out the rules a model cannot use or a model API refuses (root
combinators, Python-checked patterns: continuity.mcp.schemas); the promise it keeps is that it
never rejects an input the server accepts. So arguments are generated (hypothesis-jsonschema)
from the input model's whole schema, every rule included; each must also be valid against the
advertised inputSchema, and sent through the real /mcp endpoint it gets a result or a pinned
tool error, never a 5xx, a JSON-RPC internal error, or a validation_error that the whole schema
contradicts. Every answer, each pinned error included, matches the tool's outputSchema (SDK
clients such as the TypeScript SDK check error results against it too).
"""

from __future__ import annotations

import json
import random
import uuid
from collections import Counter
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from continuity.mcp.schemas import TOOL_ERROR_CODES, input_rules
from continuity.mcp.tools import TOOLS
from tests.continuity.mcp.eras import ERAS, LEGACY, send, tool_list
from tests.continuity.mcp.harness import EVERY_TOOL, McpWorld
from tests.continuity.mcp.schema_strategies import arguments_for, schema_errors, validator

pytestmark = pytest.mark.live_server

# Rules the server applies that JSON Schema cannot say (the project's data, or text rules),
# by tool: a validation_error naming one of these fields does not contradict the schema.
BEYOND_SCHEMA: dict[str, set[str]] = {
    "task_list": {"cursor"},  # a cursor must be one that task_list minted
    "state_put": {"body"},  # a summary under the heading, no refusal, the limit after cleaning
    "task_create": {"repository_ref.repository"},  # bound to this project
    "task_update": {"repository_ref.repository", "blocked_by"},  # no self, no cycle
    "memory_add": {"supersedes"},  # names a decision not yet superseded
}
# Codes a credential can meet through tools/call (unauthenticated is HTTP 401; unavailable and
# internal_error need a failing database, which other tests provoke).
PINNED = set(TOOL_ERROR_CODES) - {"unauthenticated", "unavailable", "internal_error"}


def call(
    world: McpWorld, era: str, name: str, arguments: dict[str, Any], who: str = "olivia"
) -> dict[str, Any]:
    """The tools/call result, after the checks every answer must pass."""
    response = send(world, era, "tools/call", {"name": name, "arguments": arguments}, who)
    assert response.status_code == 200, (response.status_code, response.text[:500])
    answer = response.json()
    assert "error" not in answer, answer  # never a JSON-RPC error, -32603 least of all
    result: dict[str, Any] = answer["result"]
    structured = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == structured
    if result.get("isError"):
        assert structured["error"]["code"] in PINNED, structured
    return result


def matches_output_schema(tools: dict[str, dict[str, Any]], name: str, result: dict[str, Any]):
    problems = schema_errors(tools[name]["outputSchema"], result["structuredContent"])
    assert not problems, (name, problems, result["structuredContent"])


# --- (a) the schemas themselves --------------------------------------------------------------


def object_nodes(node: Any, known: frozenset[str] = frozenset()) -> list[tuple[Any, frozenset]]:
    """Each schema node that states `required`, with the property names in force there: its
    own, and those of the object it refines (if/then/else, anyOf, allOf, oneOf branches)."""
    if isinstance(node, list):
        return [found for item in node for found in object_nodes(item, known)]
    if not isinstance(node, dict):
        return []
    here = known | frozenset(node.get("properties", {}))
    found = [(node, here)] if "required" in node else []
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs"):
            for sub in value.values():
                found += object_nodes(sub)
        elif key in ("if", "then", "else", "anyOf", "allOf", "oneOf"):
            found += object_nodes(value, here)
        elif isinstance(value, dict | list):
            found += object_nodes(value)
    return found


@pytest.mark.parametrize("era", ERAS)
def test_every_advertised_schema_is_valid_2020_12_json_schema(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    assert len(tools) == 13
    for name, tool in tools.items():
        for kind in ("inputSchema", "outputSchema"):
            schema = tool[kind]
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object", (name, kind)
            assert not {"$ref", "$defs", "$schema", "$id"} & set(json.dumps(schema).split('"'))
            for node, names in object_nodes(schema):
                assert set(node["required"]) <= names, (name, kind, node["required"], names)


@pytest.mark.parametrize("era", ERAS)
def test_required_input_fields_are_described(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    assert tools["task_create"]["inputSchema"]["properties"]["title"]["type"] == "string"
    assert "title" in tools["task_create"]["inputSchema"]["required"]
    assert tools["memory_add"]["inputSchema"]["properties"]["title"]["maxLength"] == 200
    # A uuid format is outside the profile every model API takes: the server checks it.
    assert tools["task_get"]["inputSchema"]["properties"]["task_id"] == {"type": "string"}


# --- (b) generated arguments through the real endpoint --------------------------------------


@pytest.fixture(scope="module")
def known(mcp_world: McpWorld) -> dict[str, Any]:
    """Real ids and olivia's write_context, for a share of the generated calls."""
    identity = call(mcp_world, LEGACY, "server_identity", {})["structuredContent"]
    write_context = identity["write_context"]
    tasks = [
        call(
            mcp_world,
            LEGACY,
            "task_create",
            {"write_context": write_context, "title": f"Task {n}", "description": "Fuzzed."},
        )["structuredContent"]["id"]
        for n in range(3)
    ]
    memories = [
        call(
            mcp_world,
            LEGACY,
            "memory_add",
            {
                "write_context": write_context,
                "kind": "decision",
                "content": f"Decision {n}",
                "rationale": "Because.",
                "source": "the schema tests",
            },
        )["structuredContent"]["id"]
        for n in range(3)
    ]
    summary = {"write_context": write_context, "agent": "codex", "body": "# Running summary\n- x"}
    call(mcp_world, LEGACY, "state_put", summary)
    return {"write_context": write_context, "tasks": tasks, "memories": memories}


LEASE_SESSION = "fuzz-session"


def leased_task(world: McpWorld, write_context: dict[str, str]) -> str:
    """A task claimed by LEASE_SESSION: heartbeats naming both can succeed. Made afresh for
    each tool's test, so no earlier test's generated writes can have ended its lease."""
    task_id = created_todo(world, LEGACY, write_context)
    claim = {"status": "in_progress", "session_ref": LEASE_SESSION}
    result = call(
        world, LEGACY, "task_update", task_update_args(write_context, task_id, 1, **claim)
    )
    assert not result.get("isError"), result
    return task_id


def with_known_values(
    world: McpWorld, rng: random.Random, arguments: dict[str, Any], known: dict[str, Any]
) -> None:
    """Swap in real values three times in four, each: most calls then get past the
    write_context and id checks and some succeed, while generated values still reach the
    server's own checks. (A seeded Random, not Hypothesis draws: those lean to the first
    choice, so the share would vary from run to run.)"""
    # A call that names a session (a heartbeat) gets the task that session holds.
    real = {
        "write_context": lambda: known["write_context"],
        "session_ref": lambda: LEASE_SESSION,
        "task_id": lambda: (
            known["leased"] if "session_ref" in arguments else rng.choice(known["tasks"])
        ),
        "memory_id": lambda: rng.choice(known["memories"]),
        "supersedes": lambda: rng.choice(known["memories"]),
        "agent": lambda: "codex",
    }
    for name, value in real.items():
        if name in arguments and rng.random() < 0.75:
            arguments[name] = value()
    current = (
        arguments.get("task_id") in {*known["tasks"], known["leased"]}
        and "expected_version" in arguments
    )
    if current and rng.random() < 0.75:
        task = call(world, LEGACY, "task_get", {"task_id": arguments["task_id"]})
        arguments["expected_version"] = task["structuredContent"]["task"]["version"]
    ref = arguments.get("repository_ref")
    if isinstance(ref, dict) and rng.random() < 0.75:
        ref["repository"] = "acme/app"


@pytest.mark.parametrize("name", EVERY_TOOL)
def test_generated_arguments_get_a_result_or_a_pinned_error(
    mcp_world: McpWorld, known: dict[str, Any], name: str
):
    tools = {era: tool_list(mcp_world, era) for era in ERAS}
    whole_schema = input_rules(TOOLS[name].spec.input_model)
    accepts = validator(whole_schema)
    advertised = {era: validator(tools[era][name]["inputSchema"]) for era in ERAS}
    generated = arguments_for(whole_schema)
    known = {**known, "leased": leased_task(mcp_world, known["write_context"])}
    outcomes: Counter[str] = Counter()

    @settings(
        max_examples=30,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    @given(data=st.data())
    def exchange(data: st.DataObject) -> None:
        arguments = data.draw(generated, label="arguments")
        assert accepts.is_valid(arguments), arguments
        swapped = json.loads(json.dumps(arguments))
        # Seeded by the arguments: a failing example replays with the same swaps.
        rng = random.Random(json.dumps(arguments, sort_keys=True))
        with_known_values(mcp_world, rng, swapped, known)
        if accepts.is_valid(swapped):  # a real memory id may not fit (a note supersedes none)
            arguments = swapped
        era = data.draw(st.sampled_from(ERAS), label="era")
        # What the server accepts, the advertised schema accepts too.
        assert advertised[era].is_valid(arguments), (era, arguments)
        result = call(mcp_world, era, name, arguments)
        matches_output_schema(tools[era], name, result)
        error = result["structuredContent"].get("error") if result.get("isError") else None
        outcomes[error["code"] if error else "result"] += 1
        if error and error["code"] == "validation_error":
            beyond = set(error["fields"]) - BEYOND_SCHEMA.get(name, set())
            assert not beyond, (name, arguments, error)

    exchange()
    # server_identity takes no argument: its two examples are {} in each era.
    assert sum(outcomes.values()) >= (25 if whole_schema["properties"] else 2), outcomes
    assert outcomes["result"] > 0, outcomes  # the schema admits calls that succeed


# --- (c) every pinned error, as a client reads it -----------------------------------------------


def task_update_args(write_context: dict[str, str], task_id: str, version: int, **changes: Any):
    return {
        "write_context": write_context,
        "task_id": task_id,
        "expected_version": version,
        **changes,
    }


@pytest.mark.parametrize("era", ERAS)
def test_every_pinned_error_matches_the_output_schema(mcp_world: McpWorld, era: str):
    tools = tool_list(mcp_world, era)
    tag = uuid.uuid4().hex[:8]
    wc = call(mcp_world, era, "server_identity", {})["structuredContent"]["write_context"]
    viewer_wc = call(mcp_world, era, "server_identity", {}, who="victor")["structuredContent"][
        "write_context"
    ]
    created = call(
        mcp_world, era, "task_create", {"write_context": wc, "title": tag, "description": "d"}
    )
    matches_output_schema(tools, "task_create", created)
    task_id = created["structuredContent"]["id"]
    receipt = {"session_ref": f"s-{tag}", "summary": "Did it."}
    first = call(
        mcp_world,
        era,
        "task_update",
        task_update_args(
            wc, task_id, 1, status="in_progress", work_receipt=receipt, session_ref=f"s-{tag}"
        ),
    )
    matches_output_schema(tools, "task_update", first)
    note = {"write_context": wc, "kind": "note", "idempotency_key": f"k-{tag}"}
    matches_output_schema(
        tools, "memory_add", call(mcp_world, era, "memory_add", {**note, "content": "first"})
    )

    provoked: dict[str, tuple[str, dict[str, Any], str]] = {
        "forbidden": (
            "memory_add",
            {"write_context": viewer_wc, "kind": "note", "content": "x"},
            "victor",
        ),
        "not_found": ("task_get", {"task_id": str(uuid.uuid4())}, "olivia"),
        "validation_error": (
            "task_create",
            {"write_context": wc, "title": " ", "description": "d"},
            "olivia",
        ),
        "write_context_mismatch": (
            "memory_add",
            {"write_context": {**wc, "instance": "elsewhere"}, "kind": "note", "content": "x"},
            "olivia",
        ),
        "stale_version": (
            "task_update",
            task_update_args(wc, task_id, 1, next_step="again"),
            "olivia",
        ),
        "invalid_transition": (
            "task_update",
            task_update_args(wc, created_todo(mcp_world, era, wc), 1, status="done"),
            "olivia",
        ),
        "idempotency_conflict": ("memory_add", {**note, "content": "second"}, "olivia"),
        "duplicate_receipt": (
            "task_update",
            task_update_args(wc, task_id, 2, work_receipt=receipt),
            "olivia",
        ),
        # The claim above holds a lease for its session: another session is refused.
        "lease_held": (
            "task_update",
            task_update_args(wc, task_id, 2, next_step="mine", session_ref=f"other-{tag}"),
            "olivia",
        ),
        "lease_lost": (
            "task_heartbeat",
            {"write_context": wc, "task_id": created_todo(mcp_world, era, wc), "session_ref": "s"},
            "olivia",
        ),
    }
    assert set(provoked) == PINNED
    for code, (name, arguments, who) in provoked.items():
        result = call(mcp_world, era, name, arguments, who)
        assert result["isError"] is True, (code, result)
        error = result["structuredContent"]["error"]
        assert error["code"] == code, (code, error)
        matches_output_schema(tools, name, result)
        assert_fields(code, error)


def created_todo(world: McpWorld, era: str, wc: dict[str, str]) -> str:
    result = call(
        world, era, "task_create", {"write_context": wc, "title": "t", "description": "d"}
    )
    return str(result["structuredContent"]["id"])


def assert_fields(code: str, error: dict[str, Any]) -> None:
    """The fields each pinned code promises, typed as the schema says."""
    if code == "stale_version":
        assert error["current_version"] == 2
    elif code == "validation_error":
        assert error["fields"] == {"title": "must not be blank"}
    elif code == "invalid_transition":
        assert (error["from_status"], error["to_status"]) == ("todo", "done")
        assert error["allowed"] == ["blocked", "cancelled", "in_progress"]
    elif code == "write_context_mismatch":
        assert error["mismatched"] == ["instance"]
        assert set(error["expected"]) == {"resource", "instance", "project"}
