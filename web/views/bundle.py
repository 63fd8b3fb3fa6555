"""The project's bundle as a download from its page (owners and admins): what GET /api/v1/export
serves, for a signed-in person."""

from __future__ import annotations

from typing import cast

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from audit.models import Outcome
from audit.recorder import record
from continuity.bundle_download import OPERATION, bundle_download
from core.access import Capability
from web.access import member_caller
from web.views.common import person_page


@require_safe
@person_page
def project_export(request: HttpRequest, slug: str) -> HttpResponse:
    caller = member_caller(request, slug)
    if not caller.can(Capability.READ_AUDIT):  # the bundle holds the audit log
        record(
            caller,
            OPERATION,
            Outcome.REJECTED,
            target_type="project",
            target_id=str(caller.project.pk),
            error_code="forbidden",
        )
        raise Http404
    return cast(HttpResponse, bundle_download(caller))
