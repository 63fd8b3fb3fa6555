from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError
from django.utils import timezone

from audit.recorder import AuditNote
from continuity.inputs import (
    RepositoryRefChange,
    RepositoryRefInput,
    TaskCreateInput,
    TaskUpdateInput,
    WorkReceiptInput,
)
from continuity.leases import (
    LEASE_COLUMNS,
    NO_LEASE,
    Holder,
    free_or_held_by,
    holder_of,
    is_live,
    lease_length,
    lease_values,
    record_holder,
)
from continuity.models import OPEN_STATUSES, TRANSITIONS, Task, TaskStatus, WorkReceipt
from continuity.outputs import TaskAckOut, TaskUpdateOut
from continuity.presenters import lease_out, receipt_out, task_ack_out, task_out
from continuity.readiness import READINESS, with_readiness
from continuity.services.dependencies import set_blocked_by
from continuity.services.idempotency import keyed
from core.access import Caller, Capability
from core.errors import (
    DuplicateReceipt,
    HeyAiraError,
    InvalidTransition,
    LeaseHeld,
    NotFound,
    StaleVersion,
    ValidationError,
)
from core.operations import operation
from core.statements import Guard, When, insert_row, update_returning
from projects.models import ProjectRepository

# done and cancelled: no move leaves them.
FINAL = frozenset(status for status, moves in TRANSITIONS.items() if not moves)


@operation(
    "task_create",
    capability=Capability.WRITE,
    input_model=TaskCreateInput,
    once=keyed(TaskAckOut, target_type="task"),
)
def task_create(caller: Caller, args: TaskCreateInput, note: AuditNote) -> TaskAckOut:
    """Create a task: a stable goal (title, description) and its first handoff state."""
    task = Task.objects.create(
        project=caller.project,
        title=args.title,
        description=args.description,
        status=args.status,
        next_step=args.next_step,
        repository_ref=_bound_ref(caller, args.repository_ref),
        created_by=caller.actor.label,
        updated_by=caller.actor.label,
    )
    note.target("task", task.pk)
    set_blocked_by(caller, task, args.blocked_by, new=True)
    return task_ack_out(task)


@operation("task_update", capability=Capability.WRITE, input_model=TaskUpdateInput)
def task_update(caller: Caller, args: TaskUpdateInput, note: AuditNote) -> TaskUpdateOut:
    """Compare-and-set the handoff on `version`, with the optional work receipt, atomically.

    The success path is two statements: the UPDATE ... RETURNING (its WHERE holds every
    precondition, the lease's included; it returns the task's readiness too) and the receipt's
    INSERT. Only a refusal reads the task, to say why, and so does the takeover of an expired
    lease (continuity.leases)."""
    note.target("task", args.task_id)
    holder = holder_of(caller, _session_of(args))
    now = timezone.now()
    try:
        # The lease a claim takes is the session_ref's it names (a receipt's session_ref alone
        # leaves it the actor's, as a claim that names none: any of its sessions may go on).
        changes = _changes(caller, args, holder_of(caller, args.session_ref), now)
    except ValidationError as invalid:
        # A refusal about the task itself (missing, stale, final) comes first, as it always has.
        raise _refused(caller, args, holder, now, otherwise=invalid) from None
    values = {"updated_at": now, **changes}
    # The WHERE on version is the lock: of concurrent updates naming one version exactly one
    # matches; PostgreSQL re-checks the row after the winner commits, so the rest update nothing.
    # The status condition admits only rows this move is allowed from; the guard, only a task
    # whose lease is this session's or nobody's.
    task = _apply(caller, args, values, guard=free_or_held_by(holder))
    if task is None:
        task = _take_over(caller, args, values, holder, now)
    if args.blocked_by is not None:
        set_blocked_by(caller, task, args.blocked_by)
        # New dependencies: the readiness the UPDATE returned is out of date.
        task = with_readiness(Task.objects.all()).get(pk=task.pk)
    receipt = None
    if args.work_receipt is not None:
        receipt = _receipt(caller, task, args.work_receipt)
    return TaskUpdateOut(task=task_out(task), receipt=receipt_out(receipt) if receipt else None)


def _take_over(
    caller: Caller, args: TaskUpdateInput, values: dict[str, Any], holder: Holder, now: Any
) -> Task:
    """The update did not apply: refused, unless another session's lease has expired, which
    this update then takes over (named in the audit log as `lease_expired`)."""
    refusal = _refusal(caller, args, holder, now)
    if not isinstance(refusal, ExpiredLease):
        raise refusal
    if args.status in (None, TaskStatus.IN_PROGRESS):
        values["lease_session_ref"] = args.session_ref or ""  # the new holder's
    task = _apply(caller, args, values, lease=refusal.row)
    if task is None:  # it changed again since the refusal read it
        raise _refused(caller, args, holder, now)
    record_holder(caller, "lease_expired", refusal.row)
    return task


def _apply(
    caller: Caller,
    args: TaskUpdateInput,
    values: dict[str, Any],
    *,
    guard: Guard | None = None,
    lease: dict[str, Any] | None = None,
) -> Task | None:
    """The UPDATE ... RETURNING; with `lease`, only while the task still has that expired lease
    (its exact old values: a heartbeat or another takeover since then changes them)."""
    where: dict[str, Any] = {
        "project_id": caller.project.pk,
        "id": args.task_id,
        "version": args.expected_version,
        "status": _moves_to(args.status),
    }
    if lease is not None:
        where.update({name: lease[name] for name in LEASE_COLUMNS if name != "lease_seconds"})
    return update_returning(
        Task,
        where=where,
        values=values,
        increment=("version",),
        returning=READINESS,  # its readiness and dependency ids, with its new state
        guard=guard,
    )


def _session_of(args: TaskUpdateInput) -> str | None:
    """The writing session: session_ref, else the work receipt's (a handoff names it there)."""
    if args.session_ref is not None:
        return args.session_ref
    return args.work_receipt.session_ref if args.work_receipt is not None else None


def _receipt(caller: Caller, task: Task, given: WorkReceiptInput) -> WorkReceipt:
    try:
        # No savepoint: a duplicate aborts the whole operation, task change included.
        receipt = WorkReceipt(
            project=caller.project,
            task=task,
            session_ref=given.session_ref,
            summary=given.summary,
            tests=[run.model_dump() for run in given.tests],
            commits=list(given.commits),
            next_step=given.next_step,
            blockers=list(given.blockers),
            task_version=task.version,
            author=caller.actor.label,
        )
        insert_row(receipt)
        return receipt
    except IntegrityError:
        # (task, session_ref) is taken: by an earlier update, or a concurrent one that
        # committed first.
        raise DuplicateReceipt() from None


def _moves_to(status: str | None) -> list[str]:
    """The statuses a task may have for this update to apply: any open one when the status
    stays, else those that may move to `status` (or already have it)."""
    if status is None:
        return list(OPEN_STATUSES)
    return [each for each in OPEN_STATUSES if each == status or status in TRANSITIONS[each]]


def _changes(caller: Caller, args: TaskUpdateInput, holder: Holder, now: Any) -> dict[str, Any]:
    given = args.model_fields_set
    changes: dict[str, Any] = {"updated_by": caller.actor.label}
    if args.status is not None:
        changes["status"] = args.status
    changes.update(_lease_changes(caller, args, holder, now))
    for name in ("next_step", "handoff_note"):
        if name in given and getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if "blockers" in given and args.blockers is not None:
        changes["blockers"] = list(args.blockers)
    if args.repository_ref is not None:  # {} clears it
        changes["repository_ref"] = _bound_ref(caller, args.repository_ref)
    return changes


def _lease_changes(
    caller: Caller, args: TaskUpdateInput, holder: Holder, now: Any
) -> dict[str, Any]:
    """A claim takes the lease for this session, any other move out of in_progress ends it;
    an update that keeps the status renews the lease of a task in progress (the guard has made
    sure the lease is this session's, or nobody's)."""
    if args.status is not None and args.status != TaskStatus.IN_PROGRESS:
        return dict(NO_LEASE)
    taken = lease_values(holder, lease_length(caller, args.lease_seconds), now)
    if not holder.session_ref:
        # A write that names no session keeps the session of the actor's own lease (a task
        # moving in from another status has none).
        del taken["lease_session_ref"]
    if args.status == TaskStatus.IN_PROGRESS:
        return taken
    return {name: When("status = 'in_progress'", value) for name, value in taken.items()}


@dataclass(frozen=True)
class ExpiredLease:
    """Why an update did not apply: another session's lease on the task expired (the update
    may take it over). `row` holds its lease columns."""

    row: dict[str, Any]


def _refused(
    caller: Caller,
    args: TaskUpdateInput,
    holder: Holder,
    now: Any,
    otherwise: HeyAiraError | None = None,
) -> HeyAiraError:
    refusal = _refusal(caller, args, holder, now, otherwise)
    if isinstance(refusal, ExpiredLease):
        current = refusal.row["version"]
        return otherwise or StaleVersion(current_version=current)
    return refusal


def _refusal(
    caller: Caller,
    args: TaskUpdateInput,
    holder: Holder,
    now: Any,
    otherwise: HeyAiraError | None = None,
) -> HeyAiraError | ExpiredLease:
    """Why the update cannot apply, checked in a fixed order: no such task, the receipt exists,
    a stale version, a final or disallowed status move, another session's lease (live: refused;
    expired: ExpiredLease), then `otherwise`."""
    task = (
        Task.objects.filter(project=caller.project, pk=args.task_id)
        .values("version", "status", *LEASE_COLUMNS)
        .first()
    )
    if task is None:
        return NotFound("No such task in this project.")
    if _receipt_exists(caller, args):
        return DuplicateReceipt()
    if task["version"] != args.expected_version:
        return StaleVersion(current_version=task["version"])
    status = task["status"]
    if status in FINAL:
        return InvalidTransition(from_status=status, to_status=args.status or status, allowed=[])
    if args.status is not None and args.status != status and args.status not in TRANSITIONS[status]:
        allowed = sorted(TRANSITIONS[status])
        return InvalidTransition(from_status=status, to_status=args.status, allowed=allowed)
    lease = lease_out(task)
    if lease is not None and not holder.holds(task):
        if is_live(task, now):
            return LeaseHeld(lease=lease.model_dump(mode="json"))
        if otherwise is None:
            return ExpiredLease(task)
    # The row changed between the UPDATE and this read (a concurrent update committed): stale.
    return otherwise or StaleVersion(current_version=task["version"])


def _receipt_exists(caller: Caller, args: TaskUpdateInput) -> bool:
    receipt = args.work_receipt
    return (
        receipt is not None
        and WorkReceipt.objects.filter(
            project=caller.project, task_id=args.task_id, session_ref=receipt.session_ref
        ).exists()
    )


def _bound_ref(
    caller: Caller, ref: RepositoryRefInput | RepositoryRefChange | None
) -> dict[str, Any] | None:
    """The reference with the repository's canonical name, if it is bound to this project; None
    for none (task_update's {} clears it)."""
    if ref is None or ref.repository is None:
        return None
    owner, _, name = ref.repository.partition("/")
    binding = (
        ProjectRepository.objects.filter(
            project=caller.project, repository__owner__iexact=owner, repository__name__iexact=name
        )
        .select_related("repository")
        .first()
    )
    if binding is None:
        raise ValidationError(
            fields={"repository_ref.repository": "is not a repository bound to this project"}
        )
    return {
        "repository": binding.repository.full_name,
        "branch": ref.branch,
        "commit": ref.commit,
    }
