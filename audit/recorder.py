"""The one way audit rows are written. Services and security hooks call it; it calls no service.

Only identifiers and outcomes are recorded: never request bodies, memory or task text, tokens,
codes or secrets (docs/architecture.md, "The audit chain").
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import re
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.db import connection
from django.utils import timezone

from audit import chain
from audit.models import AuditEvent, Outcome
from core.access import ActorType, Caller, CredentialKind
from core.database import unavailable_from
from core.statements import insert_row

logger = logging.getLogger(__name__)


class Identified(Protocol):
    """A project as the audit log sees it: an id, and maybe an `audit_chain` naming its live
    chain (audit.chain.live_chain; the audit app imports no other app)."""

    @property
    def pk(self) -> Any: ...


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

    @classmethod
    def of_session(cls, person: Any, *, request_id: str, instance: str = "") -> SecurityContext:
        """A signed-in person's (a Django user's) session."""
        return cls(
            actor_type=ActorType.USER,
            actor_id=str(person.pk),
            actor_label=person.get_username(),
            user_id=int(person.pk),
            request_id=request_id,
            instance=instance,
            credential_kind=CredentialKind.SESSION,
        )


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
) -> None:
    _write(**_caller_fields(caller, operation, outcome, target_type, target_id, error_code))


def _caller_fields(
    caller: Caller,
    operation: str,
    outcome: Outcome,
    target_type: str = "",
    target_id: str = "",
    error_code: str = "",
) -> dict[str, Any]:
    context = SecurityContext(
        actor_type=caller.actor.type,
        actor_id=caller.actor.id,
        actor_label=caller.actor.label,
        user_id=caller.user_id,
        client_id=caller.client_id or "",
        request_id=caller.request_id,
        resource=caller.resource,
        instance=caller.instance,
        credential_kind=caller.credential.kind,
        credential_fingerprint=caller.credential.fingerprint,
    )
    return _security_fields(
        operation, outcome, context, caller.project, target_type, target_id, error_code
    )


def record_security_event(
    operation: str,
    outcome: Outcome,
    context: SecurityContext,
    *,
    project: Identified | None = None,
    target_type: str = "",
    target_id: str = "",
    error_code: str = "",
) -> None:
    _write(
        **_security_fields(operation, outcome, context, project, target_type, target_id, error_code)
    )


def defer_security_event(
    operation: str, outcome: Outcome, context: SecurityContext, *, error_code: str = ""
) -> None:
    """A security event to write once the database answers (no database work now)."""
    defer(_security_fields(operation, outcome, context, error_code=error_code))


def _security_fields(
    operation: str,
    outcome: Outcome,
    context: SecurityContext,
    project: Identified | None = None,
    target_type: str = "",
    target_id: str = "",
    error_code: str = "",
) -> dict[str, Any]:
    return {
        "occurred_at": timezone.now(),
        "request_id": context.request_id,
        "actor_type": context.actor_type,
        "actor_id": context.actor_id,
        "actor_label": context.actor_label,
        "user_id": context.user_id,
        "client_id": context.client_id,
        "credential_kind": context.credential_kind,
        "credential_fingerprint": context.credential_fingerprint,
        "resource": context.resource,
        "instance": context.instance,
        "project_id": project.pk if project is not None else None,
        # The project's live chain (an imported project's is not named by its id alone).
        "chain": chain.live_chain(project) if project is not None else chain.SECURITY_CHAIN,
        "operation": operation,
        "target_type": target_type,
        "target_id": target_id,
        "outcome": outcome,
        "error_code": error_code,
    }


def defer_after_failure(caller: Caller, operation: str, note: AuditNote, code: str) -> None:
    """A rejection caused by the database being unreachable: its row waits for the database."""
    defer(
        _caller_fields(
            caller, operation, Outcome.REJECTED, note.target_type, note.target_id, error_code=code
        )
    )


def _storable_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Every text value made storable: a client's text (an unknown tool's name, a request id)
    may hold what PostgreSQL text cannot (NUL, lone surrogates), and losing the row to it would
    lose the record of the attempt."""
    return {
        name: storable(value, AuditEvent._meta.get_field(name).max_length)  # type: ignore[union-attr]
        if isinstance(value, str)
        else value
        for name, value in fields.items()
    }


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


# --- rows the database could not take ----------------------------------------------------------
#
# A rejection must be audited even when it was caused by the database being away. Its row waits
# here (identifiers and outcomes only, as every row) and is written by the next unit of database
# work that succeeds. Bounded: past MAX_PENDING, or when the process ends, a row is logged at
# WARNING with its fields instead, so it is never silently lost.

MAX_PENDING = 1000
_pending: deque[dict[str, Any]] = deque()
_pending_lock = threading.Lock()
_this_thread = threading.local()


def _event(fields: dict[str, Any]) -> AuditEvent:
    """The row to insert: its chain and the digest of its fields (audit.chain); the database
    trigger gives it its place in the chain."""
    name = fields.get("chain") or chain.chain_of(fields.get("project_id"))
    fields = {"id": uuid.uuid4(), **fields, "chain": name}
    return AuditEvent(**fields, digest=chain.digest(fields))


def _write(**fields: Any) -> None:
    fields = _storable_fields(fields)
    try:
        insert_row(_event(fields))  # what save(force_insert=True) sends, compiled once
    except Exception as error:
        if connection.in_atomic_block or unavailable_from(error) is None:
            raise  # inside a transaction the row goes (or not) with it
        defer(fields)


def defer(fields: dict[str, Any]) -> None:
    """Keep a row for the next flush; it keeps the time of the event, not of its writing."""
    fields = _storable_fields(fields)
    _this_thread.deferred = True
    with _pending_lock:
        if len(_pending) >= MAX_PENDING:
            _log_unrecorded(_pending.popleft(), "the queue of pending audit rows is full")
        _pending.append(fields)


def defer_rejection(caller: Caller, operation: str, error_code: str) -> None:
    """A rejection that happened before any database work could start (no thread came free)."""
    defer(_caller_fields(caller, operation, Outcome.REJECTED, error_code=error_code))


def unit_started() -> None:
    """A new unit of database work (an MCP call, a Django request) begins in this thread."""
    _this_thread.deferred = False


def pending_count() -> int:
    return len(_pending)


def flush_pending() -> int:
    """Write the rows that waited for the database; returns how many. Call it outside any
    transaction, after work that reached the database. A failure keeps them for the next try."""
    if getattr(_this_thread, "deferred", False):
        # The database refused a row of this very unit: do not make the same request wait for
        # it again; another unit will write them.
        return 0
    if not _pending or connection.in_atomic_block:
        return 0
    with _pending_lock:
        batch = list(_pending)
        _pending.clear()
    try:
        AuditEvent.objects.bulk_create([_event(fields) for fields in batch])
    except Exception as error:
        if unavailable_from(error) is None:
            logger.exception("pending audit rows could not be written")
        for fields in reversed(batch):
            _requeue(fields)
        return 0
    return len(batch)


def _requeue(fields: dict[str, Any]) -> None:
    with _pending_lock:
        if len(_pending) >= MAX_PENDING:
            _log_unrecorded(fields, "the queue of pending audit rows is full")
        else:
            _pending.appendleft(fields)


def _log_unrecorded(fields: dict[str, Any], why: str) -> None:
    printable = {name: str(value) for name, value in fields.items() if value not in ("", None)}
    logger.warning("audit event not recorded (%s): %s", why, printable)


@atexit.register
def log_pending() -> None:
    """The process ends (ASGI lifespan shutdown, or exit): log the rows still waiting."""
    with _pending_lock:
        rows = list(_pending)
        _pending.clear()
    for fields in rows:
        _log_unrecorded(fields, "the process ended before the database came back")
