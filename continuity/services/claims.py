"""task_claim_next: the oldest ready task, claimed for the caller, with one winner per task."""

from __future__ import annotations

from typing import Any

from django.db.models import F
from django.utils import timezone

from audit.recorder import AuditNote
from continuity.inputs import TaskClaimNextInput
from continuity.models import Task, TaskStatus
from continuity.outputs import TaskClaimOut
from continuity.presenters import task_out
from continuity.readiness import ready_tasks, with_readiness
from continuity.services.idempotency import keyed
from core.access import Caller, Capability
from core.errors import Unavailable
from core.operations import operation

# A claimer that loses a race moves on to the next ready task; so many losses in a row means
# the queue is being emptied by others faster than this claimer can read it.
_CLAIM_ATTEMPTS = 8


@operation(
    "task_claim_next",
    capability=Capability.WRITE,
    input_model=TaskClaimNextInput,
    once=keyed(TaskClaimOut, target_type="task"),
)
def task_claim_next(caller: Caller, args: TaskClaimNextInput, note: AuditNote) -> TaskClaimOut:
    """Claim the oldest ready task: todo -> in_progress, version + 1, the caller its last mover.
    Nothing ready is an answer, not an error: {"task": null}."""
    for _ in range(_CLAIM_ATTEMPTS):
        candidate = _oldest_ready(caller)
        if candidate is None:
            return TaskClaimOut(task=None)
        task_id, version = candidate
        # Compare-and-set. On PostgreSQL the row is ours already (FOR UPDATE); this statement's
        # fresh snapshot re-checks readiness, in case a dependency was added after the row was
        # read. On SQLite it is the whole guard: of concurrent claimers, one matches.
        claimed = (
            ready_tasks(caller.project)
            .filter(pk=task_id, version=version)
            .update(
                status=TaskStatus.IN_PROGRESS,
                version=F("version") + 1,
                updated_by=caller.actor.label,
                updated_at=timezone.now(),
            )
        )
        if claimed:
            note.target("task", task_id)
            return TaskClaimOut(task=task_out(with_readiness(Task.objects.all()).get(pk=task_id)))
    raise Unavailable("Other sessions are claiming the same tasks; retry in a moment.")


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
