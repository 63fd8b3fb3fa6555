"""REST endpoints under /api/v1/: one generic view, configured by the routes.

A view authenticates (CallerAuthentication), turns the path, query string, headers and JSON body
into the operation's input, calls the operation, and answers with its result and the HTTP
headers the route declares. No rule lives here: the Operation checks, validates and audits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.models import Outcome
from audit.recorder import AuditNote, record_after_failure
from continuity.api import http
from continuity.api.authentication import CallerAuthentication
from continuity.api.errors import exception_handler
from continuity.api.openapi import RouteSchema
from continuity.api.routes import Route
from core.access import Caller
from core.errors import HeyAiraError, ValidationError
from core.stepup import require_scopes

API_PREFIX = "/api/v1/"


class ApiView(APIView):
    """Base of every API view: bearer credentials only, JSON only, our error shape."""

    authentication_classes = [CallerAuthentication]
    permission_classes: list[Any] = []  # authentication never lets an anonymous request through
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]

    def get_exception_handler(self) -> Callable[..., Response | None]:
        return exception_handler

    def caller(self, request: Request) -> Caller:
        caller = request.auth
        if not isinstance(caller, Caller):  # CallerAuthentication raises before this
            raise TypeError("an API view ran without a Caller")
        return caller


class OperationView(ApiView):
    """The routes of one path, by method."""

    routes: ClassVar[dict[str, Route]] = {}
    schema = RouteSchema()

    def serve(self, request: Request, **path: str) -> Response:
        route = self.routes[request.method or ""]
        spec = route.spec
        caller = self.caller(request)
        # The Operation's own order: step-up, capability, then the input's shape, so that a
        # request refused over MCP is refused here for the same reason.
        require_scopes(caller, spec.name, spec.capability)
        try:
            caller.require(spec.capability)
            arguments = _arguments(request, route, path)
        except HeyAiraError as error:
            record_after_failure(caller, spec.name, AuditNote(), error.code)
            raise
        note = AuditNote()
        result = spec.operation.call(caller, arguments, note).model_dump(mode="json")
        headers = _headers(request, route, result, replayed=note.outcome == Outcome.REPLAYED)
        return Response(result, status=route.status, headers=headers)


def _arguments(request: Request, route: Route, path: dict[str, str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    if route.body:
        arguments = _body(request, route)
        if request.query_params:
            raise ValidationError(fields={"query": "this request takes no query parameters"})
    else:
        arguments = http.query_input(request, route)
    for name in route.path_fields:
        if name in arguments:
            raise ValidationError(fields={name: "goes in the path"})
        arguments[name] = path[name]
    if route.if_match:
        expected = http.if_match(request, route)
        if expected is not None:
            arguments["expected_version"] = expected
    key = request.headers.get(http.IDEMPOTENCY_HEADER)
    if key is not None:
        if not route.spec.idempotent:
            raise ValidationError(fields={http.IDEMPOTENCY_HEADER: "this request cannot take one"})
        arguments["idempotency_key"] = key
    return arguments


def _body(request: Request, route: Route) -> dict[str, Any]:
    data = request.data
    if not data and not isinstance(data, list):
        data = {}  # no body at all: DRF gives an empty QueryDict
    if not isinstance(data, dict) or hasattr(data, "getlist"):
        raise ValidationError(fields={"body": "must be a JSON object"})
    owned = {
        **dict.fromkeys(route.path_fields, "goes in the path"),
        "expected_version": "goes in the If-Match header",
        "idempotency_key": f"goes in the {http.IDEMPOTENCY_HEADER} header",
    }
    clashes = {name: owned[name] for name in data if name in owned}
    if clashes:
        raise ValidationError(fields=clashes)
    return dict(data)


def _headers(
    request: Request, route: Route, result: dict[str, Any], replayed: bool
) -> dict[str, str]:
    headers: dict[str, str] = {}
    version = http.version_in(result, route) if route.etag else None
    if version is not None:
        headers["ETag"] = http.etag(version)
    if route.location:
        headers["Location"] = API_PREFIX + route.location.format(id=result["id"])
    cursor = result.get("next_cursor") if route.page_of else None
    if cursor:
        headers["Link"] = http.next_link(request, cursor)
    if replayed:  # answered from its idempotency record
        headers[http.REPLAYED_HEADER] = "true"
    return headers


def operation_view(routes: list[Route]) -> type[OperationView]:
    """A view class serving these routes (one path, one method each)."""

    def handler(self: OperationView, request: Request, **path: str) -> Response:
        return self.serve(request, **path)

    methods: dict[str, Any] = {route.method.lower(): handler for route in routes}
    name = "".join(part.title() for part in routes[0].operation_name.split("_")) + "View"
    return type(name, (OperationView,), {"routes": {r.method: r for r in routes}, **methods})
