"""/api/schema/ is a valid OpenAPI 3.1 description of every route, built from the operation
table's models; /api/docs/ shows it with Swagger UI from the sidecar package, no CDN."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from openapi_spec_validator import validate

from continuity.api.routes import ROUTES


@pytest.fixture
def schema(db: None) -> dict[str, Any]:
    answer = Client().get("/api/schema/", headers={"Accept": "application/json"})
    assert answer.status_code == 200
    return answer.json()


def test_it_is_a_valid_openapi_3_1_document(schema: dict[str, Any]):
    assert schema["openapi"] == "3.1.0"
    validate(schema)


def test_it_describes_every_route_once(schema: dict[str, Any]):
    described = {
        (method.upper(), path.removeprefix("/api/v1/"))
        for path, item in schema["paths"].items()
        for method in item
    }
    # The routes of the operation table, and the import, whose body is a bundle file.
    assert described == {(route.method, route.path) for route in ROUTES} | {("POST", "import")}
    ids = [op["operationId"] for item in schema["paths"].values() for op in item.values()]
    assert sorted(ids) == sorted([*(route.operation_name for route in ROUTES), "project_import"])


def test_it_says_how_versions_and_retries_travel(schema: dict[str, Any]):
    update = schema["paths"]["/api/v1/tasks/{task_id}"]["patch"]
    headers = {p["name"]: p["required"] for p in update["parameters"] if p["in"] == "header"}
    assert headers == {"If-Match": True}
    assert {"200", "412", "428"} <= set(update["responses"])
    assert (
        "expected_version"
        not in update["requestBody"]["content"]["application/json"]["schema"]["properties"]
    )
    create = schema["paths"]["/api/v1/memories"]["post"]
    assert [p["name"] for p in create["parameters"]] == ["Idempotency-Key"]
    assert "Idempotent-Replayed" in create["responses"]["201"]["headers"]


def test_the_docs_load_swagger_ui_from_our_own_static_files(db: None):
    page = Client().get("/api/docs/")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.content.decode())
    assert sources, "no assets"
    for source in sources:
        assert source.startswith("/static/drf_spectacular_sidecar/"), source
        assert finders.find(source.removeprefix("/static/")), source


def query_parameters(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path} {parameter['name']}", parameter)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        for parameter in operation["parameters"]
        if parameter["in"] == "query"
    ]


def test_query_parameters_are_optional_and_never_null(schema: dict[str, Any]):
    """A query string cannot carry null: an optional parameter is one that may be left out."""
    found = query_parameters(schema)
    named = {where.split()[-1] for where, _ in found}
    assert {"kind", "cursor", "status", "limit", "agent", "query"} <= named
    for where, parameter in found:
        text = json.dumps(parameter["schema"])
        assert '"null"' not in text, where
        assert "anyOf" not in parameter["schema"], where
        assert "default" not in parameter["schema"] or parameter["schema"]["default"] is not None
        assert parameter["required"] is (parameter["name"] == "query"), where


def test_a_cursor_is_described_as_what_it_is(schema: dict[str, Any]):
    cursors = [parameter for where, parameter in query_parameters(schema) if "cursor" in where]
    assert len(cursors) == 3  # memories, tasks, a task's receipts
    for cursor in cursors:
        assert cursor["schema"]["type"] == "string"
        assert "Opaque" in cursor["description"]
        assert "next_cursor" in cursor["description"]


def test_neither_the_document_nor_its_page_cites_an_internal_document(
    schema: dict[str, Any], db: None
):
    assert "DESIGN" not in json.dumps(schema)
    page = Client().get("/api/docs/")
    assert "DESIGN" not in page.content.decode()
