"""REST endpoints under /api/v1/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from continuity.api.authentication import CallerAuthentication
from continuity.api.errors import exception_handler
from continuity.selectors.identity import server_identity
from core.access import Caller


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


class IdentityView(ApiView):
    """GET /api/v1/identity: server_identity for this credential (same JSON as the MCP tool)."""

    def get(self, request: Request) -> Response:
        return Response(server_identity(self.caller(request)))
