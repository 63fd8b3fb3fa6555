"""Django's handler for the REST API: the same middleware and views, run start to end on one
database thread.

Django's ASGI handler runs a request's sync middleware, view and response closing in a thread
of its own made for that request, with a hop to it for each part; the REST API's work is
nearly all database work, so here the whole sync chain runs in one unit on the database
executor (continuity.mcp.orm.run_orm: its threads, its pooled connection, its framing), and the
JSON is rendered there too. The admin, sign-in and OAuth pages keep Django's own handler.
"""

from __future__ import annotations

from typing import Any

from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase
from django.urls import set_urlconf

from continuity.mcp.orm import run_orm


class ApiHandler(ASGIHandler):
    def __init__(self) -> None:
        super().__init__()
        self.load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await run_orm(self._respond, request)

    def _respond(self, request: HttpRequest) -> Any:
        set_urlconf(None)  # the thread may have served another urlconf
        response = self.get_response(request)
        render = getattr(response, "render", None)
        if callable(render) and not getattr(response, "is_rendered", True):
            response = render()
        return response
