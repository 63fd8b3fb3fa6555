from __future__ import annotations

import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from audit.recorder import AuditNote
from continuity.inputs import RepositoryRefInput, TaskCreateInput, TaskUpdateInput
from continuity.models import TRANSITIONS, Task, WorkReceipt
from continuity.presenters import receipt_json, task_ack_json, task_json
from continuity.readiness import with_readiness
from continuity.services.dependencies import set_blocked_by
from continuity.services.idempotency import keyed
from core.access import Caller, Capability
from core.errors import (
    DuplicateReceipt,
    InvalidTransition,
    NotFound,
    StaleVersion,
    ValidationError,
)
from core.lookups import project_object
from core.operations import operation
from projects.models import ProjectRepository


@operation(
    "task_create",
    capability=Capability.WRITE,
    input_model=TaskCreateInput,
    once=keyed(target_type="task"),
)
def task_create(caller: Caller, args: TaskCreateInput, note: AuditNote) -> dict[str, Any]:
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
    return task_ack_json(task)


@operation("task_update", capability=Capability.WRITE, input_model=TaskUpdateInput)
def task_update(caller: Caller, args: TaskUpdateInput, note: AuditNote) -> dict[str, Any]:
    """Compare-and-set the handoff on `version`, with the optional work receipt, atomically."""
    note.target("task", args.task_id)
    task = project_object(Task, caller, args.task_id, missing="No such task in this project.")
    receipt_input = args.work_receipt
    if receipt_input and task.receipts.filter(session_ref=receipt_input.session_ref).exists():
        raise DuplicateReceipt()
    if task.version != args.expected_version:
        raise StaleVersion(current_version=task.version)
    changes = _changes(caller, task, args)
    # The WHERE on version is the lock: of concurrent updates naming one version exactly one
    # matches; PostgreSQL re-checks the row after the winner commits, so the rest update nothing.
    updated = Task.objects.filter(
        project=caller.project, pk=task.pk, version=args.expected_version
    ).update(version=F("version") + 1, updated_at=timezone.now(), **changes)
    if not updated:
        raise _missing_or_stale(caller, task.pk)
    if args.blocked_by is not None:
        set_blocked_by(caller, task, args.blocked_by)
    task = with_readiness(Task.objects.all()).get(pk=task.pk)  # the refresh, with readiness
    receipt = None
    if receipt_input is not None:
        try:
            with transaction.atomic():
                receipt = WorkReceipt.objects.create(
                    project=caller.project,
                    task=task,
                    session_ref=receipt_input.session_ref,
                    summary=receipt_input.summary,
                    tests=[run.model_dump() for run in receipt_input.tests],
                    commits=list(receipt_input.commits),
                    next_step=receipt_input.next_step,
                    blockers=list(receipt_input.blockers),
                    task_version=task.version,
                    author=caller.actor.label,
                )
        except IntegrityError:
            # A concurrent update landed a receipt with this session_ref first; raising rolls
            # our task change back with it.
            raise DuplicateReceipt() from None
    return {"task": task_json(task), "receipt": receipt_json(receipt) if receipt else None}


def _changes(caller: Caller, task: Task, args: TaskUpdateInput) -> dict[str, Any]:
    given = args.model_fields_set
    if task.status in ("done", "cancelled"):
        raise InvalidTransition(
            from_status=task.status, to_status=args.status or task.status, allowed=[]
        )
    changes: dict[str, Any] = {"updated_by": caller.actor.label}
    if args.status is not None and args.status != task.status:
        allowed = TRANSITIONS[task.status]
        if args.status not in allowed:
            raise InvalidTransition(
                from_status=task.status, to_status=args.status, allowed=sorted(allowed)
            )
        changes["status"] = args.status
    for name in ("next_step", "handoff_note"):
        if name in given and getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if "blockers" in given and args.blockers is not None:
        changes["blockers"] = list(args.blockers)
    if "repository_ref" in given:
        changes["repository_ref"] = _bound_ref(caller, args.repository_ref)
    return changes


def _missing_or_stale(caller: Caller, task_id: uuid.UUID) -> NotFound | StaleVersion:
    current = (
        Task.objects.filter(project=caller.project, pk=task_id)
        .values_list("version", flat=True)
        .first()
    )
    if current is None:
        return NotFound("No such task in this project.")
    return StaleVersion(current_version=current)


def _bound_ref(caller: Caller, ref: RepositoryRefInput | None) -> dict[str, Any] | None:
    """The reference with the repository's canonical name, if it is bound to this project."""
    if ref is None:
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
