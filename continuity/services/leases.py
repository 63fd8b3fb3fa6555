"""task_heartbeat (the holder renews its lease) and task_lease_release (an owner or admin ends
a stuck one). The rules they share with the claims are in continuity.leases."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import F
from django.utils import timezone

from audit.recorder import AuditNote
from continuity.inputs import TaskHeartbeatInput, TaskLeaseReleaseInput
from continuity.leases import LEASE_COLUMNS, NO_LEASE, holder_of, record_holder
from continuity.models import Task, TaskStatus
from continuity.outputs import LeaseOut, TaskHeartbeatOut, TaskLeaseReleaseOut, TaskOut
from continuity.presenters import lease_out, task_out
from continuity.readiness import with_readiness
from core.access import Caller, Capability
from core.errors import LeaseLost, NotFound, Unavailable
from core.operations import operation

_RELEASE_ATTEMPTS = 3


@operation("task_heartbeat", capability=Capability.WRITE, input_model=TaskHeartbeatInput)
def task_heartbeat(caller: Caller, args: TaskHeartbeatInput, note: AuditNote) -> TaskHeartbeatOut:
    """Extend this session's lease by its length, from now (server time). The version stays:
    a heartbeat never races the holder's own updates. A lease that expired but was not taken
    over is still this session's and renews; one taken over or released is lost."""
    note.target("task", args.task_id)
    holder = holder_of(caller, args.session_ref)
    row = _lease_row(caller, args.task_id)
    if not holder.holds(row):
        raise LeaseLost(lease=_dumped(lease_out(row)))
    expires = timezone.now() + timedelta(seconds=row["lease_seconds"])
    # The holder in the WHERE: a takeover or release committed since the read leaves nothing to
    # match (PostgreSQL re-checks the row after it), while the holder's own update does not.
    renewed = Task.objects.filter(
        project=caller.project,
        pk=args.task_id,
        status=TaskStatus.IN_PROGRESS,
        lease_actor=holder.actor,
        lease_session_ref__in=holder.sessions,
    ).update(lease_expires_at=expires)
    if not renewed:
        raise LeaseLost(lease=_dumped(lease_out(_lease_row(caller, args.task_id))))
    lease = lease_out({**row, "lease_expires_at": expires})
    assert lease is not None  # the row is in progress, with this session's lease
    return TaskHeartbeatOut(task_id=args.task_id, version=row["version"], lease=lease)


@operation(
    "task_lease_release",
    capability=Capability.RELEASE_LEASES,
    input_model=TaskLeaseReleaseInput,
)
def task_lease_release(
    caller: Caller, args: TaskLeaseReleaseInput, note: AuditNote
) -> TaskLeaseReleaseOut:
    """End the lease of a task in progress: it goes back to todo (version + 1), so that
    task_claim_next offers it again and its old holder's writes are refused. The holder is
    named in the audit log (`lease_released`). A task without a lease is left as it is."""
    note.target("task", args.task_id)
    for _ in range(_RELEASE_ATTEMPTS):
        row = _lease_row(caller, args.task_id)
        released = lease_out(row)
        if released is None:
            return TaskLeaseReleaseOut(task=_task(args.task_id), released=None)
        # Compare-and-set on the version and the lease: a heartbeat or takeover since the read
        # means another look.
        ended = Task.objects.filter(
            project=caller.project,
            pk=args.task_id,
            version=row["version"],
            status=TaskStatus.IN_PROGRESS,
            **{name: row[name] for name in LEASE_COLUMNS if name != "lease_seconds"},
        ).update(
            status=TaskStatus.TODO,
            version=F("version") + 1,
            updated_by=caller.actor.label,
            updated_at=timezone.now(),
            **NO_LEASE,
        )
        if ended:
            record_holder(caller, "lease_released", row)
            return TaskLeaseReleaseOut(task=_task(args.task_id), released=released)
    raise Unavailable("The task's lease keeps changing; retry in a moment.")


def _lease_row(caller: Caller, task_id: Any) -> dict[str, Any]:
    row: dict[str, Any] | None = (
        Task.objects.filter(project=caller.project, pk=task_id)
        .values("version", "status", *LEASE_COLUMNS)
        .first()
    )
    if row is None:
        raise NotFound("No such task in this project.")
    return row


def _task(task_id: Any) -> TaskOut:
    return task_out(with_readiness(Task.objects.all()).get(pk=task_id))


def _dumped(lease: LeaseOut | None) -> dict[str, Any] | None:
    """A lease as an error's detail (JSON, as every error detail is)."""
    return None if lease is None else lease.model_dump(mode="json")
