"""GET /api/v1/export: the project's bundle (docs/bundle.md), streamed, for owners and admins.

Not an operation of the table (its answer is a file, not a JSON result), so it is its own small
view: the same authentication, the same refusals and the same audit as every route.
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from audit.recorder import AuditNote, record_after_failure
from continuity.api.views import ApiView
from continuity.bundle_download import OPERATION, bundle_download
from core.access import Caller, Capability
from core.errors import HeyAiraError, ValidationError
from core.stepup import require_scopes


@extend_schema(exclude=True)
class ExportView(ApiView):
    def get(self, request: Request) -> StreamingHttpResponse:
        caller = self.caller(request)
        _allowed(caller, request)
        return bundle_download(caller)


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
