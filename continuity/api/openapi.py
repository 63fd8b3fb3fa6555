"""The OpenAPI 3.1 description of the REST routes, for drf-spectacular.

Every operation's parameters, body and result come from the operation table's pydantic models
(JSON Schema 2020-12, which OpenAPI 3.1 uses as it is), so the schema cannot drift from what the
server validates and returns. A route adds its headers and statuses.

A query parameter says what a query string can carry: an optional field is a parameter that may
be left out, never one that may be null (a query string has no null), so the model's `X | None`
becomes `X`, with its description on the parameter.
"""

from __future__ import annotations

from typing import Any

import pydantic
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ComponentRegistry, ResolvedComponent

from continuity.api import http
from continuity.api.errors import STATUS_BY_CODE
from continuity.api.routes import Route
from core.errors import ERROR_CODES, ProjectNotEmpty
from core.validation import PRINTABLE_ID_PATTERN

REF = "#/components/schemas/{model}"
ERROR = "Error"
STRING = {"type": "string"}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "description": "The same error object as an MCP tool error.",
            "properties": {
                "code": {
                    "enum": [
                        *ERROR_CODES,
                        "method_not_allowed",
                        "unsupported_media_type",
                        ProjectNotEmpty.code,
                    ]
                },
                "message": STRING,
                "fields": {"type": "object", "additionalProperties": STRING},
                "current_version": {"type": "integer"},
                "retry_after": {"type": "number", "minimum": 0},
            },
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}
_HEADERS: dict[str, dict[str, Any]] = {
    "ETag": {"description": 'The version, as "<version>"; send it back as If-Match.'},
    "Location": {"description": "The created resource."},
    "Link": {"description": 'The next page: <...>; rel="next".'},
    http.REPLAYED_HEADER: {
        "description": "true when an Idempotency-Key replayed the first answer."
    },
}


class RouteSchema(AutoSchema):
    """drf-spectacular's view of one OperationView: one operation per method."""

    def get_operation(
        self,
        path: str,
        path_regex: str,
        path_prefix: str,
        method: str,
        registry: ComponentRegistry,
    ) -> dict[str, Any] | None:
        route = self.view.routes[method.upper()]  # type: ignore[attr-defined]
        return operation_of(route, registry)


def operation_of(route: Route, registry: ComponentRegistry) -> dict[str, Any]:
    spec = route.spec
    inputs = _schema(spec.input_model, registry)
    properties, required = inputs.get("properties", {}), set(inputs.get("required", ()))
    operation: dict[str, Any] = {
        "operationId": spec.name,
        "summary": route.summary,
        "description": (spec.operation.__doc__ or "").strip(),
        "tags": [route.path.split("/")[0]],
        "parameters": [
            *(_parameter(name, "path", properties[name], True) for name in route.path_fields),
            *(
                _query_parameter(name, properties[name], name in required)
                for name in properties
                if not route.body and name not in route.path_fields
            ),
            *_header_parameters(route),
        ],
        "responses": _responses(route, registry),
        "security": [{"bearer": []}],
    }
    if route.body:
        owned = {*route.path_fields, *route.header_fields}
        body = {
            **inputs,
            "properties": {k: v for k, v in properties.items() if k not in owned},
            "required": sorted(required - owned),
        }
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": body}},
        }
    return operation


def _parameter(name: str, where: str, schema: dict[str, Any], required: bool) -> dict[str, Any]:
    return {"name": name, "in": where, "required": required, "schema": schema}


NULL = {"type": "null"}


def _query_parameter(name: str, schema: dict[str, Any], required: bool) -> dict[str, Any]:
    """An optional query parameter: left out when not wanted, never null."""
    options = schema.get("anyOf", [])
    if NULL in options:
        kept = [option for option in options if option != NULL]
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        schema = {**rest, **kept[0]} if len(kept) == 1 else {**rest, "anyOf": kept}
    schema = {k: v for k, v in schema.items() if k != "title"}
    description = schema.pop("description", None)
    parameter = _parameter(name, "query", schema, required)
    return {**parameter, "description": description} if description else parameter


def _header_parameters(route: Route) -> list[dict[str, Any]]:
    headers = []
    if route.if_match:
        tag = {"type": "string", "pattern": http.ENTITY_TAG_PATTERNS[route.if_match]}
        headers.append(_parameter("If-Match", "header", tag, route.if_match == "required"))
    if route.spec.idempotent:
        # The same rule the input model holds the key to, so a generated client sends no key
        # the server refuses.
        key = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": PRINTABLE_ID_PATTERN}
        headers.append(_parameter(http.IDEMPOTENCY_HEADER, "header", key, False))
    return headers


def _responses(route: Route, registry: ComponentRegistry) -> dict[str, Any]:
    success: dict[str, Any] = {
        "description": route.summary,
        "content": {"application/json": {"schema": _schema(route.spec.output_model, registry)}},
    }
    headers = [
        name
        for name, wanted in (
            ("ETag", route.etag),
            ("Location", route.location),
            ("Link", route.page_of),
            (http.REPLAYED_HEADER, route.spec.idempotent),
        )
        if wanted
    ]
    if headers:
        success["headers"] = {name: {**_HEADERS[name], "schema": STRING} for name in headers}
    error = _error(registry)
    statuses = sorted(
        {*STATUS_BY_CODE.values(), 405, 406, 415} | ({428} if route.if_match else set())
    )
    return {str(route.status): success, **{str(status): error for status in sorted(statuses)}}


def _error(registry: ComponentRegistry) -> dict[str, Any]:
    component = ResolvedComponent(
        ERROR, ResolvedComponent.SCHEMA, object=ERROR, schema=ERROR_SCHEMA
    )
    registry.register_on_missing(component)
    return {
        "description": "An error: its code says which.",
        "content": {"application/json": {"schema": component.ref}},
    }


def _schema(model: type[pydantic.BaseModel], registry: ComponentRegistry) -> dict[str, Any]:
    """The model's JSON Schema; the models it uses become components."""
    schema = model.model_json_schema(ref_template=REF)
    for name, definition in schema.pop("$defs", {}).items():
        registry.register_on_missing(
            ResolvedComponent(name, ResolvedComponent.SCHEMA, object=name, schema=definition)
        )
    return schema
