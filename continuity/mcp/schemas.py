"""Compact JSON Schemas for the tools, derived from the operations' own input models.

The input models are what validates (inside each service); the schemas shown to clients are
generated from them so the two never drift, then trimmed: titles, defaults and nullable unions
cost bytes in every session's context window and teach a model nothing.
"""

from __future__ import annotations

from typing import Any

import pydantic

_DROPPED_KEYS = frozenset({"title", "default"})


def input_schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    definitions = raw.pop("$defs", {})
    schema = _compact(raw, definitions)
    schema.setdefault("properties", {})
    return schema


def _compact(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_compact(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return _compact(definitions[name], definitions)
    options = node.get("anyOf")
    if options and len(options) == 2 and {"type": "null"} in options:
        # Optional fields: the null branch only repeats what "not required" already says.
        kept = next(option for option in options if option != {"type": "null"})
        merged = {**{k: v for k, v in node.items() if k != "anyOf"}, **kept}
        return _compact(merged, definitions)
    compacted = {
        key: _compact(value, definitions) for key, value in node.items() if key not in _DROPPED_KEYS
    }
    if compacted.get("type") == "string" and compacted.get("maxLength", 0) <= 300:
        # Short identifiers: their caps are enforced all the same; stating them costs bytes.
        compacted.pop("maxLength", None)
        compacted.pop("minLength", None)
    if compacted.get("type") == "object" and "properties" in compacted:
        # additionalProperties is stated once, at the root, where clients look for it.
        compacted.pop("additionalProperties", None)
    return compacted


def strict_root(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "additionalProperties": False}


# --- output schemas (hand-written: they describe presenters, not input models) --------------


def obj(required: list[str] | None = None, **properties: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    schema["required"] = list(properties) if required is None else required
    return schema


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
OBJECT = {"type": "object"}
ARRAY = {"type": "array"}
NULLABLE_OBJECT = {"type": ["object", "null"]}
NULLABLE_STRING = {"type": ["string", "null"]}

IDENTITY = obj(
    resource=STRING, instance=STRING, project=OBJECT, principal=OBJECT, write_context=OBJECT
)
CONTEXT = obj(
    project=OBJECT,
    repositories=ARRAY,
    memories=ARRAY,
    tasks=ARRAY,
    receipts=ARRAY,
    state=NULLABLE_OBJECT,
    limits=OBJECT,
    counts=OBJECT,
)
MEMORY_ACK = obj(
    id=STRING, kind=STRING, title=STRING, supersedes=NULLABLE_STRING, created_at=STRING
)
MEMORY = obj(memory=OBJECT)
SEARCH = obj(query=STRING, results=ARRAY)
TASK_ACK = obj(id=STRING, title=STRING, status=STRING, version=INTEGER, created_at=STRING)
TASK = obj(task=OBJECT, receipts=ARRAY)
TASK_LIST = obj(tasks=ARRAY, next_cursor=NULLABLE_STRING)
TASK_UPDATE = obj(task=OBJECT, receipt=NULLABLE_OBJECT)
STATE_ACK = obj(agent=STRING, version=INTEGER, chars=INTEGER, created_at=STRING)
STATE = obj(state=OBJECT)
