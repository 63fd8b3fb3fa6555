"""Request ids: taken from X-Request-ID when the client sends a sane one, made up otherwise,
echoed in the response, and carried into the audit log through the Caller."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from core.database import unavailable_from
from core.request_ids import REQUEST_ID_HEADER, request_id_from


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER))
        request.request_id = request_id  # type: ignore[attr-defined]
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        return response


class DatabaseUnavailableMiddleware:
    """A database fault in a Django view (the admin, sign-in, OAuth pages) is a 503 with
    Retry-After, like `unavailable` elsewhere, not a 500. The REST API answers its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        unavailable = unavailable_from(exception)
        if unavailable is None:
            return None
        response = HttpResponse(
            f"{unavailable.message}\n", status=503, content_type="text/plain; charset=utf-8"
        )
        response["Retry-After"] = str(unavailable.retry_after)
        return response
