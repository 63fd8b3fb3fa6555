"""Every line of an export is valid against the JSON Schema of its record type (docs/bundle/),
and the documentation lists every type the code writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from continuity.bundle.records import NAMES
from tests.continuity.bundle.conftest import export_bytes
from tests.factories import World

SCHEMAS = Path(__file__).resolve().parents[3] / "docs" / "bundle"


def _validators() -> dict[str, Draft202012Validator]:
    validators = {}
    for path in SCHEMAS.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        validators[path.name.removesuffix(".schema.json")] = Draft202012Validator(
            schema, format_checker=Draft202012Validator.FORMAT_CHECKER
        )
    return validators


def test_there_is_a_schema_per_record_type_and_the_docs_name_each() -> None:
    assert set(_validators()) == {"header", "trailer", *NAMES}
    guide = (SCHEMAS.parent / "bundle.md").read_text()
    for name in ("header", "trailer", *NAMES):
        assert f"`{name}`" in guide
        assert f"bundle/{name}.schema.json" in guide


@pytest.mark.django_db
def test_every_line_of_an_export_is_valid_against_its_schema(full: World) -> None:
    validators = _validators()
    seen: dict[str, int] = {}
    for number, line in enumerate(export_bytes("alpha").splitlines(), 1):
        record = json.loads(line)
        kind = record["record"]
        errors = [error.message for error in validators[kind].iter_errors(record)]
        assert not errors, f"line {number} ({kind}): {errors}"
        seen[kind] = seen.get(kind, 0) + 1
    assert set(seen) == {"header", "trailer", *NAMES}
    assert seen["memory"] == 100
    assert seen["task"] == 50
    assert seen["audit_event"] >= 1000
