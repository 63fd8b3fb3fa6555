"""POST /api/v1/import: a bundle (docs/bundle.md) into the credential's own project.

A credential is bound to one project, and no endpoint takes a project from its input: so the
bundle goes into the project the credential is for, which must hold no records yet (make a new
project and a key for it to import into). Owners only. The records keep the bundle's ids,
versions and times (no one is made a member: that is for people signed in, or operators); the
project keeps its own id, slug and name, and its audit chain goes on
with the import's event, while the bundle's project's chains are kept as they are, archived.
All or nothing, in one transaction; every refusal is audited in the project's chain.

The body is read line by line (the server keeps it in a temporary file, never whole in memory);
its cap is HEYAIRA_MAX_BODY_BYTES_IMPORT (heyaira.bodies), not the API's.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework.request import Request
from rest_framework.response import Response

from audit.recorder import AuditNote, record_after_failure
from continuity.api.openapi import ERROR_SCHEMA
from continuity.api.views import ApiView
from continuity.bundle.format import BundleError
from continuity.bundle.load import OPERATION, ImportReport, import_bundle
from core.access import Caller, Capability, Role
from core.errors import Forbidden, HeyAiraError, ValidationError
from core.stepup import require_scopes

PATH = "/api/v1/import"
DRY_RUN = "dry_run"

REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "project": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "slug": {"type": "string"}},
        },
        "bundle": {"type": "string", "description": "The bundle's digest, sha256:<hex>."},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "not_added": {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "The bundle's members: an import over REST adds no one (owners add members in "
                "the admin)."
            ),
        },
        "dry_run": {"type": "boolean"},
    },
    "required": ["project", "bundle", "counts", "not_added", "dry_run"],
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_SCHEMA}}}


OPERATION_SCHEMA: dict[str, Any] = {
    "operationId": OPERATION,
    "summary": "Import a bundle into this (empty) project",
    "description": (
        "The body is a project bundle as GET /api/v1/export writes it (JSON Lines, "
        "docs/bundle.md); send its Content-Length. Its records go into the credential's own "
        "project, which must hold no repository bindings, memories, tasks, dependencies, "
        "receipts or running summaries yet; they keep the bundle's ids, versions and times. "
        "Owners only, with continuity:write. All or nothing: a refused bundle leaves nothing, "
        "and the refusal names its first bad line."
    ),
    "tags": ["import"],
    "parameters": [
        {
            "name": DRY_RUN,
            "in": "query",
            "required": False,
            "description": "true: check and report, keep nothing.",
            "schema": {"type": "boolean"},
        }
    ],
    "requestBody": {
        "required": True,
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
    },
    "responses": {
        "201": {
            "description": "Imported",
            "content": {"application/json": {"schema": REPORT_SCHEMA}},
        },
        "200": {
            "description": "A dry run's report",
            "content": {"application/json": {"schema": REPORT_SCHEMA}},
        },
        "400": _error("validation_error: the bundle is refused (`fields.body` names the line)"),
        "401": _error("unauthenticated"),
        "403": _error("forbidden: not an owner, or the credential lacks continuity:write"),
        "409": _error("project_not_empty: the project holds records (`holds` says which)"),
        "413": _error("validation_error: the body is over HEYAIRA_MAX_BODY_BYTES_IMPORT"),
    },
    "security": [{"bearer": []}],
}


class ImportSchema(AutoSchema):
    """The import's one operation, as written above (its body is a file, not a model)."""

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        return OPERATION_SCHEMA


class ImportView(ApiView):
    schema = ImportSchema()

    def post(self, request: Request) -> Response:
        caller = self.caller(request)
        dry_run = _allowed(caller, request)
        try:
            # DRF's stream: the request itself, read line by line (None for an empty body).
            report = import_bundle(request.stream or (), dry_run=dry_run, caller=caller)
        except BundleError as error:  # audited by import_bundle, in the project's chain
            raise ValidationError(
                f"The bundle is refused: {error}. Nothing was imported.",
                fields={"body": str(error)},
            ) from None
        return Response(_answer(report), status=200 if dry_run else 201)


def _allowed(caller: Caller, request: Request) -> bool:
    """Owners, through a credential that may write; the one query parameter is dry_run."""
    require_scopes(caller, OPERATION, Capability.WRITE)
    try:
        caller.require(Capability.WRITE)
        if caller.role != Role.OWNER:
            raise Forbidden("Only the project's owners can import a bundle into it.")
        unknown = set(request.query_params) - {DRY_RUN}
        if unknown:
            raise ValidationError(fields={"query": f"unknown parameter {sorted(unknown)[0]}"})
        flag = request.query_params.get(DRY_RUN, "false").lower()
        if flag not in ("true", "false", "1", "0"):
            raise ValidationError(fields={DRY_RUN: "is true or false"})
    except HeyAiraError as error:
        record_after_failure(caller, OPERATION, AuditNote(), error.code)
        raise
    return flag in ("true", "1")


def _answer(report: ImportReport) -> dict[str, Any]:
    return {
        "project": {"id": report.project_id, "slug": report.slug},
        "bundle": report.digest,
        "counts": report.counts,
        "not_added": report.not_added,
        "dry_run": report.dry_run,
    }
