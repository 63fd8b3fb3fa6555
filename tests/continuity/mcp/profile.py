"""The tool-schema profile that the Anthropic, OpenAI and Gemini tool APIs all accept, as checks,
and the vendors' own converters as the model APIs' clients run them.

- `profile_faults(schema)`: why an inputSchema is outside the profile (docs/mcp-transport.md,
  "Tool schemas"), or [];
- `strict_refusal(schema)`: what OpenAI's strict converter (the Agents SDK's
  `ensure_strict_json_schema`) refuses, or None;
- `gemini_refusal(schema)`: what google-genai's JSON-Schema-to-Gemini conversion
  (`types.Schema.from_json_schema`, unsupported fields refused) refuses, warns about or drops,
  or None;
- `model_visible(tool)`: what a model reads of a tool (name, description, inputSchema and the
  `_meta` a client reads), as compact UTF-8 JSON.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from typing import Any

import pydantic
from agents.exceptions import UserError
from agents.strict_schema import ensure_strict_json_schema
from google.genai import types as genai_types

ROOT_KEYS = {"type", "properties", "required", "additionalProperties"}
# Nowhere in an inputSchema: what a model API refuses, skips the tool over, or cannot convert.
REFUSED_ANYWHERE = (
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "$schema",
    "default",
    "title",
    "examples",
    "const",
    "uniqueItems",
    "patternProperties",
)
KEPT_FORMATS = {"date-time"}
MAX_NESTING = 4  # objects and arrays on a path from the root, the root included
TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
# What a model reads of a tool: the rest of a tools/list entry (title, annotations,
# outputSchema) only lets clients show and validate.
MODEL_VISIBLE_KEYS = ("name", "description", "inputSchema", "_meta")


def model_visible(tool: dict[str, Any]) -> bytes:
    seen = {key: tool[key] for key in MODEL_VISIBLE_KEYS if key in tool}
    return json.dumps(seen, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def subschemas(schema: Any) -> list[dict[str, Any]]:
    """Every schema node under `schema` (itself included), never a property *name*: a field
    called `not` or `title` is a property, not a keyword."""
    return [node for node, _ in _walk(schema)]


def _walk(schema: Any) -> list[tuple[dict[str, Any], int]]:
    """(node, nesting) pairs: a node's nesting counts the objects and arrays on its path from
    the root, itself included (the root object is 1; a string field of it, 1 too)."""
    found: list[tuple[dict[str, Any], int]] = []
    stack = [(schema, 0)]
    while stack:
        node, above = stack.pop()
        if not isinstance(node, dict):
            continue
        level = above + 1 if _types(node) & {"object", "array"} else above
        found.append((node, level))
        for key, value in node.items():
            if key in ("properties", "patternProperties", "$defs"):
                stack.extend((sub, level) for sub in value.values())
            elif key in ("items", "additionalProperties", "not", "if", "then", "else"):
                stack.append((value, level))
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
                stack.extend((sub, above) for sub in value)
    return found


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    return set(kind) if isinstance(kind, list) else set()


def profile_faults(schema: dict[str, Any]) -> list[str]:
    """Why a tool's inputSchema is outside the profile, or []."""
    faults = []
    if set(schema) != ROOT_KEYS:
        faults.append(f"root keys {sorted(schema)}, not {sorted(ROOT_KEYS)}")
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        faults.append("root is not a closed object")
    for node, nesting in _walk(schema):
        faults += _node_faults(node)
        if nesting > MAX_NESTING:
            faults.append(f"nested {nesting} levels deep (at most {MAX_NESTING})")
    return faults


def _node_faults(node: dict[str, Any]) -> list[str]:
    faults = [f"{key} in a schema node" for key in REFUSED_ANYWHERE if key in node]
    kind = node.get("type")
    if not isinstance(kind, str):
        faults.append(f"type {kind!r}: one type per node, never a list or none")
    elif kind == "null":
        faults.append("a null type")
    if None in node.get("enum", ()):
        faults.append("null in an enum")
    if "format" in node and node["format"] not in KEPT_FORMATS:
        faults.append(f"format {node['format']!r}")
    if kind == "object":
        if node.get("additionalProperties") is not False:
            faults.append(f"an open object: {sorted(node.get('properties', {}))}")
        if not set(node.get("required", [])) <= set(node.get("properties", {})):
            faults.append("an object requires a property it does not declare")
    return faults


def strict_refusal(schema: dict[str, Any]) -> str | None:
    try:
        ensure_strict_json_schema(copy.deepcopy(schema))  # it mutates its argument
    except (UserError, ValueError, TypeError) as refusal:
        return str(refusal)
    return None


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def gemini_refusal(schema: dict[str, Any]) -> str | None:
    """google-genai's conversion of an inputSchema to a Gemini Schema, as strict as it goes:
    an unknown keyword is a validation error, an unsupported one raises, a warning (a union
    type, say) counts, and so does a property the converted schema lost."""
    warnings = _Warnings()
    logger = logging.getLogger("google_genai")
    logger.addHandler(warnings)
    try:
        converted = genai_types.Schema.from_json_schema(
            json_schema=genai_types.JSONSchema.model_validate(copy.deepcopy(schema)),
            api_option="GEMINI_API",
            raise_error_on_unsupported_field=True,
        )
    except (pydantic.ValidationError, ValueError) as refusal:
        return str(refusal).splitlines()[0]
    finally:
        logger.removeHandler(warnings)
    if warnings.messages:
        return f"warned: {warnings.messages[0]}"
    lost = _property_paths(schema) - _property_paths(converted.model_dump(exclude_none=True))
    return f"lost {sorted(lost)}" if lost else None


def _property_paths(node: Any, prefix: str = "") -> set[str]:
    if not isinstance(node, dict):
        return set()
    paths: set[str] = set()
    for name, sub in (node.get("properties") or {}).items():
        paths |= {f"{prefix}{name}", *_property_paths(sub, f"{prefix}{name}.")}
    paths |= _property_paths(node.get("items"), f"{prefix}[].")
    return paths
