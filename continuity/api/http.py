"""What HTTP carries outside the JSON body: path fields, query strings, If-Match and
Idempotency-Key in, ETag, Location, Link and Idempotent-Replayed out."""

from __future__ import annotations

import functools
import re
from typing import Any
from urllib.parse import urlencode

import pydantic
from rest_framework.request import Request

from continuity.api.errors import PreconditionRequired
from continuity.api.routes import Route
from core.errors import ValidationError

IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
# One strong entity tag, as ETag sends it: "<version>" (a bare <version> is taken too: some
# clients and generators drop the quotes).
# What the schema promises: a version a task (from 1) or a running summary (from 0) can have.
ENTITY_TAG_PATTERNS = {"required": r'^"?[1-9][0-9]{0,8}"?$', "optional": r'^"?[0-9]{1,9}"?$'}
_ENTITY_TAG = re.compile(r'^"?([0-9]{1,10})"?$')
_INTEGER = re.compile(r"^-?[0-9]{1,12}$")


def etag(version: int) -> str:
    return f'"{version}"'


def version_in(result: dict[str, Any], route: Route) -> int | None:
    value: Any = result
    for name in route.etag.split("."):
        value = value.get(name) if isinstance(value, dict) else None
    return value if isinstance(value, int) else None


def if_match(request: Request, route: Route) -> int | None:
    """expected_version from If-Match; None when it is absent and optional."""
    given = request.headers.get("If-Match")
    if given is None:
        if route.if_match == "required":
            raise PreconditionRequired()
        return None
    match = _ENTITY_TAG.match(given)
    if match is None:
        raise ValidationError(
            fields={"If-Match": 'must be one entity tag as ETag sent it, such as "3"'}
        )
    return int(match.group(1))


def query_input(request: Request, route: Route) -> dict[str, Any]:
    """The query string as input fields; numbers become integers where the model has them, and
    any other name is passed on for the input model to refuse."""
    integers = _integer_fields(route.spec.input_model)
    arguments: dict[str, Any] = {}
    for name, values in request.query_params.lists():
        value: Any = values[-1] if len(values) == 1 else values
        if name in integers and isinstance(value, str) and _INTEGER.match(value):
            value = int(value)
        arguments[name] = value
    return arguments


@functools.cache
def _integer_fields(model: type[pydantic.BaseModel]) -> frozenset[str]:
    properties = model.model_json_schema().get("properties", {})
    return frozenset(
        name
        for name, schema in properties.items()
        if schema.get("type") == "integer"
        or any(option.get("type") == "integer" for option in schema.get("anyOf", ()))
    )


def next_link(request: Request, cursor: str) -> str:
    query = {name: values[-1] for name, values in request.query_params.lists()}
    query["cursor"] = cursor
    return f'<{request.path}?{urlencode(query)}>; rel="next"'
