"""The tools' JSON Schemas (2020-12), generated from the operations' input and output models.

The input models are what validates (inside each service) and the output models describe what
the presenters return, so a schema cannot drift from the server. Generated schemas are then
compacted: pydantic's annotation titles and defaults are dropped (they cost bytes in every
session's context window and constrain nothing), and `$ref`s are inlined (some clients'
validators do not follow them). An optional `X | None` output is one type list.

An inputSchema is what the model behind a client reads, and it keeps to one profile that the
Anthropic, OpenAI and Gemini tool APIs all accept (docs/mcp-transport.md, "Tool schemas"): the
root is a plain closed object; nowhere a combinator (`anyOf`, `oneOf`, `allOf`, `not`,
`if`/`then`/`else`), a `$ref`, a `null` type, a `default`, a `title`, a `const`, a `format`
other than `date-time`, `uniqueItems` or an open map. So an optional input `X | None` is X left
out of `required`: the server takes null there as "not given", and an explicit value says
"clear" where a field can be cleared ([] for a list, {} for repository_ref). The patterns that
only restate a Python check (core.validation.SchemaPattern) are left out too. Every rule a
schema does not state is still enforced by the input models, with a `validation_error` that
says what to send, and stated in the descriptions. So an inputSchema accepts everything the
server accepts, and a little more.

Every output schema accepts the success result and the pinned tool error: SDK clients check
every `structuredContent` against it, error results included.
"""

from __future__ import annotations

from typing import Any

import pydantic

from core.errors import ERROR_CODES
from core.validation import STATED_PATTERNS

# Annotations of a schema node that constrain nothing. Only dropped from schema nodes, never
# from a `properties` map, where "title" is a field like any other.
_ANNOTATIONS = frozenset({"title", "default"})
# Keywords whose value maps names to schemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties"})
NULL = {"type": "null"}


# Keywords a model API refuses, or drops the tool over, at the root of an input schema.
ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf", "not", "if", "then", "else")
# The one `format` every model API takes; the others (uuid) the server checks and the field's
# name or description states.
KEPT_FORMATS = frozenset({"date-time"})


def model_schema(model: type[pydantic.BaseModel], *, nulls: bool = True) -> dict[str, Any]:
    """The model's whole schema, every rule it can state included (tests generate from it).
    nulls=False: an optional `X | None` is X (an input's null is "not given", never a value)."""
    raw = model.model_json_schema()
    definitions = raw.pop("$defs", {})
    schema: dict[str, Any] = _compact(raw, definitions, nulls)
    schema.setdefault("properties", {})
    return schema


def input_rules(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """Every rule of an input model that JSON Schema can state, null-free (tests generate
    arguments from it; the advertised inputSchema is it, less what a model API refuses)."""
    return model_schema(model, nulls=False)


def input_schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """What a model reads: a plain object at the root, in the profile every model API takes."""
    schema = {k: v for k, v in input_rules(model).items() if k not in ROOT_COMBINATORS}
    schema.setdefault("required", [])
    advertised: dict[str, Any] = _in_profile(schema)
    return advertised


def _in_profile(node: Any) -> Any:
    """Without the Python-checked patterns (each gives way to its looser keywords) and the
    formats model APIs do not take."""
    if isinstance(node, list):
        return [_in_profile(item) for item in node]
    if not isinstance(node, dict):
        return node
    kept: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern" and value in STATED_PATTERNS:
            for name, instead in STATED_PATTERNS[value].items():
                kept.setdefault(name, instead)
        elif key == "format" and value not in KEPT_FORMATS:
            continue
        elif key in _SCHEMA_MAPS:
            kept[key] = {name: _in_profile(sub) for name, sub in value.items()}
        else:
            kept[key] = _in_profile(value)
    return kept


def output_schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The result or a tool error; the root stays an object, as MCP requires."""
    return {"type": "object", "anyOf": [model_schema(model), TOOL_ERROR]}


def _compact(node: Any, definitions: dict[str, Any], nulls: bool) -> Any:
    if isinstance(node, list):
        return [_compact(item, definitions, nulls) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return _compact({**definitions[name], **siblings}, definitions, nulls)
    options = node.get("anyOf")
    if options and len(options) == 2 and NULL in options:
        other = next(option for option in options if option != NULL)
        kept = _compact(other, definitions, nulls)
        rest = {key: value for key, value in node.items() if key != "anyOf"}
        return _compact({**rest, **(_nullable(kept) if nulls else kept)}, definitions, nulls)
    compacted: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ANNOTATIONS:
            continue
        if key in _SCHEMA_MAPS:
            compacted[key] = {
                name: _compact(sub, definitions, nulls) for name, sub in value.items()
            }
        else:
            compacted[key] = _compact(value, definitions, nulls)
    return compacted


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null, in one node where possible (a type list, an enum with null)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        schema = {**schema, "type": [kind, "null"]}
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [schema, NULL]}


# --- the pinned tool error -----------------------------------------------------------------

STRING = {"type": "string"}
STRINGS = {"type": "array", "items": STRING}
# `unavailable` (a retryable database outage) and `internal_error` (the last-resort answer to a
# server fault) are tool errors too; a client must be able to read them like any other.
TOOL_ERROR_CODES = (*ERROR_CODES, "unavailable", "internal_error")

TOOL_ERROR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            # Open: a client reads the fields it knows; a newer server may add more.
            "properties": {
                "code": {"enum": list(dict.fromkeys(TOOL_ERROR_CODES))},
                "message": STRING,
                "fields": {"type": "object", "additionalProperties": STRING},
                "current_version": {"type": "integer"},
                "from_status": STRING,
                "to_status": STRING,
                "allowed": STRINGS,
                "mismatched": STRINGS,
                "expected": {"type": "object", "additionalProperties": STRING},
                "required_scopes": STRINGS,
                "retry_after": {"type": "number", "minimum": 0},
            },
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}
