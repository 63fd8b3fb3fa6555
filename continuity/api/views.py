"""REST endpoints under /api/v1/: one view class, configured per path by its routes.

A view authenticates (CallerAuthentication) and hands the Operation its arguments: how to read
them from the path, query string, headers and JSON body. The Operation checks the step-up and the
capability, then reads them (so a refused caller's input is never read), validates and audits;
the view answers with its result and the HTTP headers the route declares.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

if TYPE_CHECKING:
    from rest_framework.views import AsView, GenericView

from audit.models import Outcome
from audit.recorder import AuditNote
from continuity.api import http
from continuity.api.authentication import CallerAuthentication
from continuity.api.errors import UnsupportedMediaType, exception_handler
from continuity.api.openapi import RouteSchema
from continuity.api.routes import Route
from core.access import Caller
from core.errors import ValidationError

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
    """The routes of one path, by method: `OperationView.as_view(routes=...)`."""

    routes: dict[str, Route] = {}
    schema = RouteSchema()

    @classmethod
    def as_view(cls, **initkwargs: Any) -> AsView[GenericView]:
        """A view serving `routes` (one path, one method each). The methods it allows are
        theirs (drf-spectacular reads them from http_method_names), with HEAD beside GET."""
        routes: Sequence[Route] = initkwargs.pop("routes")
        methods = {route.method.lower() for route in routes} | {"options"}
        if "get" in methods:
            methods.add("head")
        return super().as_view(
            routes={route.method: route for route in routes},
            http_method_names=[name for name in cls.http_method_names if name in methods],
            **initkwargs,
        )

    def serve(self, request: Request, **path: str) -> Response:
        route = self.routes[request.method or ""]
        note = AuditNote()
        read = lambda: _arguments(request, route, path)  # noqa: E731
        result = route.spec.operation.call(self.caller(request), read, note)
        answer = result.model_dump(mode="json")
        headers = _headers(request, route, answer, replayed=note.outcome == Outcome.REPLAYED)
        return Response(answer, status=route.status, headers=headers)

    get = post = put = patch = delete = serve


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
    try:
        data = request.data
    except exceptions.UnsupportedMediaType as refusal:
        raise UnsupportedMediaType(str(refusal.detail)) from None
    except exceptions.ParseError:
        raise ValidationError(fields={"body": "is not valid JSON"}) from None
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
