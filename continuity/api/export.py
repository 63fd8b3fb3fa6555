"""GET /api/v1/export: the project's bundle (docs/bundle.md), streamed, for owners and admins.

Not an operation of the table (its answer is a file, not a JSON result), so it is its own small
view: the same authentication, the same refusals and the same audit as every route.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from audit.models import Outcome
from audit.recorder import AuditNote, record, record_after_failure
from continuity.api.views import ApiView
from continuity.bundle.export import bundle_lines
from core.access import Caller, Capability
from core.errors import HeyAiraError, ValidationError
from core.stepup import require_scopes

OPERATION = "project_export"
CONTENT_TYPE = "application/x-ndjson"
LINES_PER_CHUNK = 500


@extend_schema(exclude=True)
class ExportView(ApiView):
    def get(self, request: Request) -> StreamingHttpResponse:
        caller = self.caller(request)
        _allowed(caller, request)
        # Recorded before the stream starts: the bundle holds its own export's event, and an
        # export taken just after (project_export) gives the same bytes.
        record(
            caller,
            OPERATION,
            Outcome.SUCCESS,
            target_type="project",
            target_id=str(caller.project.pk),
        )
        response = StreamingHttpResponse(
            _streamed(bundle_lines(caller.project)), content_type=CONTENT_TYPE
        )
        name = f"heyaira-{caller.project.slug}.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


def _allowed(caller: Caller, request: Request) -> None:
    """Owners and admins: the audit log is in the bundle (and with it, the project's data)."""
    require_scopes(caller, OPERATION, Capability.READ_AUDIT)
    require_scopes(caller, OPERATION, Capability.READ)
    try:
        caller.require(Capability.READ_AUDIT)
        caller.require(Capability.READ)
        if request.query_params:
            raise ValidationError(fields={"query": "this request takes no query parameters"})
    except HeyAiraError as error:
        record_after_failure(caller, OPERATION, AuditNote(), error.code)
        raise


def _take(lines: Iterator[bytes]) -> bytes:
    return b"".join(line for _, line in zip(range(LINES_PER_CHUNK), lines, strict=False))


async def _streamed(lines: Iterator[bytes]) -> AsyncIterator[Any]:
    """The sync generator read a chunk at a time in the request's own thread: its transaction
    and cursor stay on one connection, and the server sends each chunk as it comes (a sync
    iterator would be read whole into memory under ASGI)."""
    try:
        while chunk := await sync_to_async(_take, thread_sensitive=True)(lines):
            yield chunk
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()
