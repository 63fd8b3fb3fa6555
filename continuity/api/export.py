"""GET /api/v1/export: the project's bundle (docs/bundle.md), streamed, for owners and admins.

Not an operation of the table (its answer is a file, not a JSON result), so it is its own small
view: the same authentication, the same refusals and the same audit as every route.
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from audit.models import Outcome
from audit.recorder import AuditNote, record, record_after_failure
from continuity.api.views import ApiView
from continuity.bundle.export import bundle_lines, streamed
from core.access import Caller, Capability
from core.errors import HeyAiraError, ValidationError
from core.stepup import require_scopes

OPERATION = "project_export"
CONTENT_TYPE = "application/x-ndjson"


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
            streamed(bundle_lines(caller.project)), content_type=CONTENT_TYPE
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
