"""task_claim_next: the next task to work on, claimed with a lease, one winner per task.

The rule (docs/tools.md): first the in_progress task whose lease expired longest ago (work
begun by a session that stopped renewing comes back before new work is started), else the
oldest ready task (todo, every blocked_by task done). Each candidate is one step of an index
(task_lease_expiry, task_project_oldest), however many tasks the project holds.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import F
from django.utils import timezone

from audit.recorder import AuditNote
from continuity.inputs import TaskClaimNextInput
from continuity.leases import holder_of, lease_length, lease_values, record_holder
from continuity.models import Task, TaskStatus
from continuity.outputs import TaskClaimOut
from continuity.presenters import task_out
from continuity.readiness import ready_tasks, with_readiness
from continuity.services.idempotency import keyed
from core.access import Caller, Capability
from core.errors import Unavailable
from core.operations import operation

# A claimer that loses a race moves on to the next candidate; so many losses in a row means
# the queue is being emptied by others faster than this claimer can read it.
_CLAIM_ATTEMPTS = 8
_EXPIRED_LEASE = ("pk", "version", "lease_actor", "lease_session_ref", "lease_expires_at")


@operation(
    "task_claim_next",
    capability=Capability.WRITE,
    input_model=TaskClaimNextInput,
    once=keyed(TaskClaimOut, target_type="task"),
)
def task_claim_next(caller: Caller, args: TaskClaimNextInput, note: AuditNote) -> TaskClaimOut:
    """Claim the next task for this session: in_progress with a lease, version + 1, the caller
    its last mover. Nothing to claim is an answer, not an error: {"task": null}."""
    holder = holder_of(caller, args.session_ref)
    seconds = lease_length(caller, args.lease_seconds)
    for _ in range(_CLAIM_ATTEMPTS):
        now = timezone.now()
        lease = lease_values(holder, seconds, now)
        expired = _longest_expired(caller, now)
        if expired is not None:
            if _take_over(caller, expired, lease, now):
                record_holder(caller, "lease_expired", expired)
                return _claimed(note, expired["pk"])
            continue
        candidate = _oldest_ready(caller)
        if candidate is None:
            return TaskClaimOut(task=None)
        if _claim_ready(caller, candidate, lease, now):
            return _claimed(note, candidate[0])
    raise Unavailable("Other sessions are claiming the same tasks; retry in a moment.")


def _claimed(note: AuditNote, task_id: Any) -> TaskClaimOut:
    note.target("task", task_id)
    return TaskClaimOut(task=task_out(with_readiness(Task.objects.all()).get(pk=task_id)))


def _claim_ready(
    caller: Caller, candidate: tuple[Any, int], lease: dict[str, Any], now: datetime
) -> bool:
    task_id, version = candidate
    # Compare-and-set. On PostgreSQL the row is ours already (FOR UPDATE); this statement's
    # fresh snapshot re-checks readiness, in case a dependency was added after the row was
    # read. On SQLite it is the whole guard: of concurrent claimers, one matches.
    return bool(
        ready_tasks(caller.project)
        .filter(pk=task_id, version=version)
        .update(
            status=TaskStatus.IN_PROGRESS,
            version=F("version") + 1,
            updated_by=caller.actor.label,
            updated_at=now,
            **lease,
        )
    )


def _take_over(
    caller: Caller, expired: dict[str, Any], lease: dict[str, Any], now: datetime
) -> bool:
    # Compare-and-set on the version and the lease's exact expiry: a heartbeat that renewed the
    # lease since it was read, or a claimer that took it first, leaves nothing to match.
    return bool(
        Task.objects.filter(
            project=caller.project,
            pk=expired["pk"],
            version=expired["version"],
            status=TaskStatus.IN_PROGRESS,
            lease_expires_at=expired["lease_expires_at"],
            lease_expires_at__lte=now,
        ).update(
            version=F("version") + 1,
            updated_by=caller.actor.label,
            updated_at=now,
            **lease,
        )
    )


def _longest_expired(caller: Caller, now: datetime) -> dict[str, Any] | None:
    """The in_progress task whose lease expired longest ago, locked for this transaction (SKIP
    LOCKED: concurrent claimers take different ones instead of queueing on one)."""
    found: dict[str, Any] | None = (
        Task.objects.filter(
            project=caller.project, status=TaskStatus.IN_PROGRESS, lease_expires_at__lte=now
        )
        .order_by("lease_expires_at")
        .select_for_update(skip_locked=True)
        .values(*_EXPIRED_LEASE)
        .first()
    )
    return found


def _oldest_ready(caller: Caller) -> tuple[Any, int] | None:
    """The oldest ready task's id and version, locked for this transaction. SKIP LOCKED: a
    task another claimer holds is passed over, so concurrent claimers take different tasks
    instead of queueing on one (SQLite has no row locks and ignores the clause)."""
    found: tuple[Any, int] | None = (
        ready_tasks(caller.project)
        .order_by("created_at", "id")
        .select_for_update(skip_locked=True)
        .values_list("pk", "version")
        .first()
    )
    return found
