"""The one way audit rows are written. Services and security hooks call it; it calls no service.

Only identifiers and outcomes are recorded: never request bodies, memory or task text, tokens,
codes or secrets (DESIGN section 7).
"""

from __future__ import annotations

import hashlib
import logging
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
    return AuditEvent.objects.create(
        request_id=caller.request_id[:64],
        actor_type=caller.actor.type,
        actor_id=caller.actor.id[:64],
        actor_label=caller.actor.label[:150],
        user_id=caller.user_id,
        client_id=(caller.client_id or "")[:100],
        credential_kind=caller.credential.kind,
        credential_fingerprint=caller.credential.fingerprint,
        resource=caller.resource[:300],
        instance=caller.instance[:100],
        project=caller.project,
        operation=operation,
        target_type=target_type,
        target_id=target_id[:128],
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
    return AuditEvent.objects.create(
        request_id=context.request_id[:64],
        actor_type=context.actor_type,
        actor_id=context.actor_id[:64],
        actor_label=context.actor_label[:150],
        user_id=context.user_id,
        client_id=context.client_id[:100],
        credential_kind=context.credential_kind,
        credential_fingerprint=context.credential_fingerprint,
        resource=context.resource[:300],
        instance=context.instance[:100],
        project=project,
        operation=operation,
        target_type=target_type,
        target_id=target_id[:128],
        outcome=outcome,
        error_code=error_code,
    )


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
