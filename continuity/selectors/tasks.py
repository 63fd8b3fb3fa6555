from __future__ import annotations

from django.db.models import QuerySet

from audit.recorder import AuditNote
from continuity.budget import clip, one_line
from continuity.inputs import TaskGetInput, TaskListInput
from continuity.models import OPEN_STATUSES, Task
from continuity.outputs import TaskGetOut, TaskListItemOut, TaskListOut
from continuity.presenters import receipt_out, repository_ref_out, task_out
from continuity.readiness import is_ready, split_ids, with_readiness
from continuity.selectors.cursors import page
from core.access import Caller, Capability
from core.lookups import project_object
from core.operations import operation

RECENT_RECEIPTS = 10
LIST_TEXT_BYTES = 280


@operation("task_get", capability=Capability.READ, input_model=TaskGetInput, writes=False)
def task_get(caller: Caller, args: TaskGetInput, note: AuditNote) -> TaskGetOut:
    """The whole task with its most recent work receipts."""
    note.target("task", args.task_id)
    task = project_object(
        with_readiness(Task.objects.all()),
        caller,
        args.task_id,
        missing="No such task in this project.",
    )
    receipts = task.receipts.order_by("-created_at", "-id")[:RECENT_RECEIPTS]
    return TaskGetOut(task=task_out(task), receipts=[receipt_out(r) for r in receipts])


@operation("task_list", capability=Capability.READ, input_model=TaskListInput, writes=False)
def task_list(caller: Caller, args: TaskListInput, note: AuditNote) -> TaskListOut:
    """Tasks newest first, optionally by status ("open" = todo, in_progress, blocked; "ready" =
    todo with every task it is blocked by done)."""
    tasks: QuerySet[Task] = with_readiness(Task.objects.filter(project=caller.project))
    if args.status == "open":
        tasks = tasks.filter(status__in=OPEN_STATUSES)
    elif args.status == "ready":
        tasks = tasks.filter(is_ready())
    elif args.status:
        tasks = tasks.filter(status=args.status)
    found, next_cursor = page(tasks, cursor=args.cursor, limit=args.limit, listing="task_list")
    return TaskListOut(tasks=[_list_item(task) for task in found], next_cursor=next_cursor)


def _list_item(task: Task) -> TaskListItemOut:
    return TaskListItemOut(
        id=task.pk,
        title=task.title,
        status=task.status,
        version=task.version,
        next_step=clip(one_line(task.next_step), LIST_TEXT_BYTES),
        blocker_count=len(task.blockers),
        repository_ref=repository_ref_out(task.repository_ref),
        blocked_by=split_ids(task.blocked_ids),  # type: ignore[attr-defined]
        ready=bool(task.ready),  # type: ignore[attr-defined]
        created_at=task.created_at,
        updated_at=task.updated_at,
    )
