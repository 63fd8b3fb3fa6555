"""HeyAira errors as REST answers: the status of each error code, decided once."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import APIException, ParseError
from rest_framework.response import Response

from core.access import Caller
from core.database import unavailable_from
from core.errors import (
    DuplicateReceipt,
    Forbidden,
    HeyAiraError,
    IdempotencyConflict,
    InvalidTransition,
    LeaseHeld,
    LeaseLost,
    NotFound,
    ProjectNotEmpty,
    StaleVersion,
    Unauthenticated,
    Unavailable,
    ValidationError,
    WriteContextMismatch,
)
from core.stepup import InsufficientScope
from identity import authn

STATUS_BY_CODE: dict[str, int] = {
    Unauthenticated.code: 401,
    Forbidden.code: 403,
    NotFound.code: 404,
    ValidationError.code: 400,
    WriteContextMismatch.code: 403,
    StaleVersion.code: 412,
    InvalidTransition.code: 409,
    IdempotencyConflict.code: 422,
    DuplicateReceipt.code: 409,
    Unavailable.code: 503,
    LeaseHeld.code: 409,
    LeaseLost.code: 409,
}


class PreconditionRequired(ValidationError):
    """An update sent without If-Match: 428 (RFC 6585). Its code stays the pinned
    validation_error, with If-Match named in `fields`."""

    status = 428

    def __init__(self) -> None:
        super().__init__(
            "If-Match is required: send the ETag of the version you read.",
            fields={"If-Match": "is required"},
        )


class UnsupportedMediaType(HeyAiraError):
    """A body that is not JSON: 415, as DRF answers it, but read (and audited) only after the
    operation has checked the caller."""

    code = "unsupported_media_type"
    status = 415


def status_for(error: HeyAiraError) -> int:
    if isinstance(error, PreconditionRequired | UnsupportedMediaType | ProjectNotEmpty):
        return error.status
    return STATUS_BY_CODE.get(error.code, 400)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's exception handler for our views; None lets anything unexpected surface as a 500."""
    if isinstance(exc, authn.AuthenticationFailed):
        return _answer(exc.error, exc.status, exc.www_authenticate)
    if isinstance(exc, InsufficientScope):
        caller = getattr(context.get("request"), "auth", None)
        if isinstance(caller, Caller):
            # A step-up, already audited by core.stepup: the same answer as on MCP.
            failure = authn.step_up(caller, exc)
            return _answer(failure.error, failure.status, failure.www_authenticate)
    if isinstance(exc, HeyAiraError):
        return _answer(exc, status_for(exc))
    unavailable = unavailable_from(exc)
    if unavailable is not None:
        # A database fault outside any operation (a selector, DRF itself): retryable, never 500.
        return _answer(unavailable, status_for(unavailable))
    if isinstance(exc, ParseError):
        # A body that is not JSON is bad input like any other.
        invalid = ValidationError(fields={"body": "is not valid JSON"})
        return _answer(invalid, status_for(invalid))
    if isinstance(exc, APIException):
        # DRF's own refusals (method not allowed, unacceptable media type...) in our shape.
        error = {"code": exc.get_codes() if isinstance(exc.get_codes(), str) else "invalid"}
        error["message"] = str(exc.detail)
        return Response({"error": error}, status=exc.status_code)
    return None


def _answer(error: HeyAiraError, status: int, challenge: str | None = None) -> Response:
    headers = {"WWW-Authenticate": challenge} if challenge else {}
    if isinstance(error, Unavailable):
        headers["Retry-After"] = str(error.retry_after)
    return Response({"error": error.as_dict()}, status=status, headers=headers or None)
