"""The one typed error hierarchy. Each error carries a stable, pinned `code` (docs/architecture.md).

Transports map these once each (MCP: tool error results; REST: status codes); services raise
them and nothing else for expected failures.
"""

from __future__ import annotations

from typing import Any, ClassVar


class HeyAiraError(Exception):
    code: ClassVar[str] = "error"
    default_message: ClassVar[str] = "The request failed."

    def __init__(self, message: str | None = None, **details: Any) -> None:
        self.message = message or self.default_message
        self.details = details
        super().__init__(self.message)

    def as_dict(self) -> dict[str, Any]:
        """The client-facing error object: code, message and the fields a client can act on."""
        return {"code": self.code, "message": self.message, **self.details}


class Unauthenticated(HeyAiraError):
    code = "unauthenticated"
    default_message = "No valid credential was presented."


class Forbidden(HeyAiraError):
    code = "forbidden"
    default_message = "Your role or the credential's scopes do not allow this."


class NotFound(HeyAiraError):
    code = "not_found"
    default_message = "No such object in this project."


class ValidationError(HeyAiraError):
    code = "validation_error"
    default_message = "The input is not valid."

    def __init__(self, message: str | None = None, *, fields: dict[str, str]) -> None:
        summary = "; ".join(f"{name}: {problem}" for name, problem in fields.items())
        super().__init__(message or f"Invalid arguments: {summary}.", fields=fields)
        self.fields = fields


class ProjectNotEmpty(HeyAiraError):
    """A bundle goes over REST only into a project that holds no records yet (`holds` names
    what it holds). POST /api/v1/import's own refusal, outside the pinned codes of the
    operations (no MCP tool meets it): 409."""

    code = "project_not_empty"
    status = 409
    default_message = "The project holds records already."


class WriteContextMismatch(HeyAiraError):
    code = "write_context_mismatch"
    default_message = (
        "write_context does not match this credential; call server_identity and use its "
        "write_context."
    )


class StaleVersion(HeyAiraError):
    code = "stale_version"

    def __init__(self, *, current_version: int) -> None:
        super().__init__(
            f"expected_version is not current; the current version is {current_version}. "
            "Read the task again before updating it.",
            current_version=current_version,
        )
        self.current_version = current_version


class InvalidTransition(HeyAiraError):
    code = "invalid_transition"

    def __init__(self, *, from_status: str, to_status: str, allowed: list[str]) -> None:
        super().__init__(
            f"A task cannot move from {from_status} to {to_status}.",
            from_status=from_status,
            to_status=to_status,
            allowed=allowed,
        )


class IdempotencyConflict(HeyAiraError):
    code = "idempotency_conflict"
    default_message = (
        "This idempotency_key was already used with a different payload; use a new key for a "
        "new request."
    )


class DuplicateReceipt(HeyAiraError):
    code = "duplicate_receipt"
    default_message = "A work receipt for this task and session_ref already exists."


class Unavailable(HeyAiraError):
    """The database is briefly unreachable, or a lock or statement timeout fired: nothing was
    done, and the same request may be sent again after `retry_after` seconds."""

    code = "unavailable"
    default_message = "The service is briefly unavailable; retry the request in a moment."

    def __init__(self, message: str | None = None, *, retry_after: int = 1) -> None:
        super().__init__(message, retry_after=retry_after)
        self.retry_after = retry_after


class LeaseHeld(HeyAiraError):
    """Another session holds the task's lease, and it is live: what it is, who, until when."""

    code = "lease_held"

    def __init__(self, *, lease: dict[str, Any]) -> None:
        holder = lease["holder"]
        super().__init__(
            f"{holder['actor']} (session {holder['session_ref'] or 'unnamed'}) holds this task's "
            f"lease until {lease['expires_at']}; only that session may change the task until "
            "then. Take another task, or wait until the lease expires and claim it again.",
            lease=lease,
        )


class LeaseLost(HeyAiraError):
    """The caller's session holds no lease on the task: it expired and was taken over, it
    was released, or the task left in_progress."""

    code = "lease_lost"

    def __init__(self, *, lease: dict[str, Any] | None) -> None:
        super().__init__(
            "This session holds no lease on the task (it expired and was taken over, was "
            "released, or the task is no longer in progress). Stop working on it; task_get it to "
            "see who holds it now.",
            lease=lease,
        )


# Every code a client can receive, in the order of docs/architecture.md, "Error codes".
ERROR_CODES: tuple[str, ...] = (
    Unauthenticated.code,
    Forbidden.code,
    NotFound.code,
    ValidationError.code,
    WriteContextMismatch.code,
    StaleVersion.code,
    InvalidTransition.code,
    IdempotencyConflict.code,
    DuplicateReceipt.code,
    Unavailable.code,
    LeaseHeld.code,
    LeaseLost.code,
)
