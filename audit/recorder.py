"""The one way audit rows are written. Services and security hooks call it; it calls no service.

Only identifiers and outcomes are recorded: never request bodies, memory or task text, tokens,
codes or secrets (DESIGN section 7).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field

from audit.models import AuditEvent, Outcome
from projects.access import ActorType, Caller
from projects.models import Project

logger = logging.getLogger(__name__)


@dataclass
class AuditNote:
    """What an operation tells the recorder about itself while it runs."""

    target_type: str = ""
    target_id: str = ""
    outcome: Outcome = Outcome.SUCCESS

    def target(self, target_type: str, target_id: object) -> None:
        self.target_type = target_type
        self.target_id = str(target_id)


@dataclass(frozen=True)
class SecurityContext:
    """Who is behind a security event that happens before any Caller exists (sign-in, OAuth)."""

    actor_type: ActorType = ActorType.ANONYMOUS
    actor_id: str = ""
    actor_label: str = ""
    user_id: int | None = None
    client_id: str = ""
    request_id: str = ""
    resource: str = ""
    instance: str = ""
    credential_kind: str = ""
    credential_fingerprint: str = ""
    extra_targets: dict[str, str] = field(default_factory=dict)


def fingerprint(value: str) -> str:
    """A short, one-way tag of a credential identifier; the identifier itself is never stored."""
    return hashlib.sha256(value.encode()).hexdigest()[:12]


def record(
    caller: Caller,
    operation: str,
    outcome: Outcome,
    *,
    target_type: str = "",
    target_id: str = "",
    error_code: str = "",
) -> AuditEvent:
    return _create(
        request_id=caller.request_id,
        actor_type=caller.actor.type,
        actor_id=caller.actor.id,
        actor_label=caller.actor.label,
        user_id=caller.user_id,
        client_id=caller.client_id or "",
        credential_kind=caller.credential.kind,
        credential_fingerprint=caller.credential.fingerprint,
        resource=caller.resource,
        instance=caller.instance,
        project=caller.project,
        operation=operation,
        target_type=target_type,
        target_id=target_id,
        outcome=outcome,
        error_code=error_code,
    )


def record_security_event(
    operation: str,
    outcome: Outcome,
    context: SecurityContext,
    *,
    project: Project | None = None,
    target_type: str = "",
    target_id: str = "",
    error_code: str = "",
) -> AuditEvent:
    return _create(
        request_id=context.request_id,
        actor_type=context.actor_type,
        actor_id=context.actor_id,
        actor_label=context.actor_label,
        user_id=context.user_id,
        client_id=context.client_id,
        credential_kind=context.credential_kind,
        credential_fingerprint=context.credential_fingerprint,
        resource=context.resource,
        instance=context.instance,
        project=project,
        operation=operation,
        target_type=target_type,
        target_id=target_id,
        outcome=outcome,
        error_code=error_code,
    )


def _create(**fields: object) -> AuditEvent:
    """One row, every text value made storable first: a client's text (an unknown tool's name, a
    request id) may hold what PostgreSQL text cannot (NUL, lone surrogates), and losing the row
    to it would lose the record of the attempt."""
    cleaned = {
        name: storable(value, AuditEvent._meta.get_field(name).max_length)  # type: ignore[union-attr]
        if isinstance(value, str)
        else value
        for name, value in fields.items()
    }
    return AuditEvent.objects.create(**cleaned)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def storable(value: str, limit: int | None = None) -> str:
    """Text any database and log line can hold: control characters and lone surrogates written
    as escapes (so "a\\x00b" stays distinguishable from "ab"), then cut to `limit` characters."""
    text = value.encode("utf-8", "backslashreplace").decode("utf-8")
    text = _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
    return text[:limit] if limit else text


def record_after_failure(caller: Caller, operation: str, note: AuditNote, code: str) -> None:
    """Record a rejection or error after its transaction rolled back, so it is never lost.

    If even this write fails (the database is gone), log the fact without any payload and let
    the original error propagate.
    """
    outcome = Outcome.ERROR if code == "internal" else Outcome.REJECTED
    try:
        record(
            caller,
            operation,
            outcome,
            target_type=note.target_type,
            target_id=note.target_id,
            error_code=code,
        )
    except Exception:
        logger.exception("could not record audit event for %s (%s)", operation, code)
