"""Arguments generated from an advertised inputSchema (hypothesis-jsonschema), and the checks
that every answer of a tool is described by its advertised outputSchema."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

# hypothesis-jsonschema knows no "uuid" format; ids are canonical (hyphenated, lowercase).
FORMATS = {"uuid": st.uuids().map(str)}


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return from_schema(schema, custom_formats=FORMATS).map(_an_object)


def _an_object(value: Any) -> dict[str, Any]:
    assert isinstance(value, dict), value  # a root of type object generates objects only
    return value


def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A 2020-12 validator that also checks formats, as the TypeScript SDK's Ajv does."""
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator(schema).iter_errors(instance)
    ]
