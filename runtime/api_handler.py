"""Django's handler for the REST API: the same middleware and views, run start to end in one
hop to a database thread.

Django's ASGI handler makes a thread for each request (its ThreadSensitiveContext) and hops to
it for the request signals, the middleware and view, and the response's closing. The REST API's
work is nearly all database work, so here everything synchronous about a request (the
request_started signal, building the request, middleware and view, rendering the JSON, closing
the response, which sends request_finished) runs as one unit on the database executor
(runtime.orm.run_orm: its threads, its pooled connection, its framing); the event loop
only reads the body and sends the answer. The admin, sign-in and OAuth pages keep Django's own
handler.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import HttpRequest, HttpResponseBase
from django.urls import set_script_prefix, set_urlconf

from runtime.orm import run_orm


class ApiHandler(ASGIHandler):
    def __init__(self) -> None:
        super().__init__()
        self.load_middleware(is_async=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"the REST API serves HTTP only, not {scope['type']}")
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            response = await run_orm(self._serve, scope, body_file)
            await self.send_response(response, send)
            if response.streaming:  # none of the API's answers streams; closed once sent
                await sync_to_async(response.close)()
        finally:
            body_file.close()

    def _serve(self, scope: Any, body_file: Any) -> HttpResponseBase:
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, refusal = self.create_request(scope, body_file)
        response: Any = refusal if request is None else self._respond(request)
        # Django's handlers also stamp the response's private _handler_class, read only as the
        # sender of request_finished; every receiver (Django's, audit's) listens to any sender.
        if not response.streaming:
            response.close()  # its body is in memory: request_finished goes out here
        return response

    def _respond(self, request: HttpRequest) -> Any:
        set_urlconf(None)  # the thread may have served another urlconf
        response = self.get_response(request)
        render = getattr(response, "render", None)
        if callable(render) and not getattr(response, "is_rendered", True):
            response = render()
        return response
