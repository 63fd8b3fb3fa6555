"""Request bodies capped before anything reads them or anyone is authenticated.

The ASGI application runs every HTTP request through `capped` first. Each class of path has its
cap (settings HEYAIRA_MAX_BODY_BYTES_*: /mcp, the REST API, a bundle's import
(/api/v1/import), OAuth, everything else):

- a declared `Content-Length` over the cap is answered 413 at once, without reading a byte (the
  server closes the connection rather than read the rest);
- a chunked body is read here, into memory, at most up to the cap: one byte more and it is
  answered 413 the same way. A chunked body within the cap is handed on whole, with the
  `Content-Length` it turned out to have: Django and DRF take a request without one for an
  empty body, so valid JSON sent chunked would otherwise read as "Field required".

Nothing is spooled to disk (Django spools bodies over 2.5 MB; no body that large gets there).
The 413 says so in the shape of its path: the JSON error of /mcp, the REST error of /api (code
`validation_error`, the body named in `fields`), a short page elsewhere. Each refusal is
anonymous noise (audit.noise): counted per client network, the first of a window audited.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from django.conf import settings
from starlette.types import ASGIApp, Receive, Scope, Send

from audit.models import Outcome
from audit.noise import count_rejection
from audit.recorder import SecurityContext, record_security_event
from core.errors import ValidationError
from core.request_ids import request_id_from
from runtime.orm import run_orm
from runtime.replay import replayed

logger = logging.getLogger(__name__)

OPERATION = "request_body"
IMPORT_PATH = "/api/v1/import"
REASON = "body_too_large"


@dataclass(frozen=True)
class BodyLimits:
    mcp: int
    api: int
    oauth: int
    other: int
    # POST /api/v1/import: a whole bundle, declared by its Content-Length (the server keeps
    # it in a temporary file). A chunked body is read here, into memory, so it gets the API's
    # cap: a bundle is sent with its length.
    bundle: int = 0

    @classmethod
    def from_settings(cls) -> BodyLimits:
        return cls(
            mcp=settings.HEYAIRA_MAX_BODY_BYTES_MCP,
            api=settings.HEYAIRA_MAX_BODY_BYTES_API,
            oauth=settings.HEYAIRA_MAX_BODY_BYTES_OAUTH,
            other=settings.HEYAIRA_MAX_BODY_BYTES_OTHER,
            bundle=settings.HEYAIRA_MAX_BODY_BYTES_IMPORT,
        )

    def for_path(self, path: str, *, chunked: bool = False) -> int:
        if path == "/mcp":
            return self.mcp
        if path == IMPORT_PATH and self.bundle and not chunked:
            return self.bundle
        if path.startswith("/api/"):
            return self.api
        if path.startswith("/oauth/"):
            return self.oauth
        return self.other


async def capped(app: ASGIApp, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
    """Serve an HTTP request with `app` if its body fits in `limit` bytes, else answer 413."""
    declared = _content_length(scope)
    if declared is not None:
        if declared > limit:
            await _refuse(scope, send, limit)
            return
        await app(scope, receive, send)  # the server reads no more than it declared
        return
    if not _has_header(scope, b"transfer-encoding"):
        await app(scope, receive, send)  # no body at all
        return
    body = await _read_at_most(receive, limit)
    if body is None:
        await _refuse(scope, send, limit)
        return
    await app(_with_length(scope, len(body)), replayed(body, receive), send)


async def _read_at_most(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it passes `limit` (the rest is never read). A client
    that goes away mid-body leaves what came, which the app then meets as a disconnect."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _with_length(scope: Scope, length: int) -> Scope:
    headers = [
        (name, value)
        for name, value in scope.get("headers", [])
        if name.lower() not in (b"transfer-encoding", b"content-length")
    ]
    headers.append((b"content-length", str(length).encode()))
    return {**scope, "headers": headers}


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server refuses a malformed length before we see it
    return None


def _has_header(scope: Scope, wanted: bytes) -> bool:
    return any(name.lower() == wanted for name, _ in scope.get("headers", []))


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == wanted:
            return str(value.decode("latin-1"))
    return None


async def _refuse(scope: Scope, send: Send, limit: int) -> None:
    request_id = request_id_from(_header(scope, b"x-request-id"))
    content_type, body = _answer(scope["path"], limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                (b"x-request-id", request_id.encode()),
                # The rest of the body is never read: the connection cannot carry another
                # request.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
    client = scope.get("client")
    await _count(str(client[0]) if client else "", request_id)


def _answer(path: str, limit: int) -> tuple[bytes, bytes]:
    message = f"Request body too large: at most {limit} bytes here."
    if path == "/mcp":  # the endpoint's own shape for the same refusal
        error = {"code": ValidationError.code, "message": message}
        return b"application/json", json.dumps({"error": error}).encode()
    if path.startswith("/api/"):  # the REST error shape, as continuity.api.errors gives it
        refusal = ValidationError(message, fields={"body": f"is larger than {limit} bytes"})
        return b"application/json", json.dumps({"error": refusal.as_dict()}).encode()
    page = f"<!doctype html><title>Request too large</title><p>{message}</p>\n"
    return b"text/html; charset=utf-8", page.encode()


async def _count(address: str, request_id: str) -> None:
    """Anonymous noise: counted per network, the first of a window audited (audit.noise)."""

    def count() -> None:
        if count_rejection(OPERATION, REASON, address):
            context = SecurityContext(request_id=request_id, instance=settings.HEYAIRA_INSTANCE)
            record_security_event(OPERATION, Outcome.REJECTED, context, error_code=REASON)

    try:
        await run_orm(count)
    except Exception:  # the answer is given; a database away only loses this count
        logger.warning("a refused request body could not be counted", exc_info=True)
