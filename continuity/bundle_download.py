"""The project's bundle as a file to download: one answer for GET /api/v1/export and the
project page's export link, each of which checks its own caller first."""

from __future__ import annotations

from django.http import StreamingHttpResponse

from audit.models import Outcome
from audit.recorder import record
from continuity.bundle.export import bundle_lines, streamed
from core.access import Caller

OPERATION = "project_export"
CONTENT_TYPE = "application/x-ndjson"


def bundle_download(caller: Caller) -> StreamingHttpResponse:
    """Record the export, then stream the caller's project's bundle as an attachment."""
    # Recorded before the stream starts: the bundle holds its own export's event, and an
    # export taken just after gives the same bytes.
    project = caller.project
    record(caller, OPERATION, Outcome.SUCCESS, target_type="project", target_id=str(project.pk))
    response = StreamingHttpResponse(streamed(bundle_lines(project)), content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="heyaira-{project.slug}.jsonl"'
    return response
