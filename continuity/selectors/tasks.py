from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from audit.recorder import AuditNote
from continuity.budget import clip, one_line
from continuity.inputs import TaskGetInput, TaskListInput
from continuity.models import OPEN_STATUSES, Task
from continuity.presenters import readiness_json, receipt_json, rfc3339, task_json
from continuity.readiness import is_ready, with_readiness
from continuity.selectors.cursors import page
from core.access import Caller, Capability
from core.lookups import project_object
from core.operations import operation

RECENT_RECEIPTS = 10
LIST_TEXT_BYTES = 280


@operation("task_get", capability=Capability.READ, input_model=TaskGetInput, writes=False)
def task_get(caller: Caller, args: TaskGetInput, note: AuditNote) -> dict[str, Any]:
    """The whole task with its most recent work receipts."""
    note.target("task", args.task_id)
    task = project_object(
        with_readiness(Task.objects.all()),
        caller,
        args.task_id,
        missing="No such task in this project.",
    )
    receipts = task.receipts.order_by("-created_at", "-id")[:RECENT_RECEIPTS]
    return {"task": task_json(task), "receipts": [receipt_json(r) for r in receipts]}


@operation("task_list", capability=Capability.READ, input_model=TaskListInput, writes=False)
def task_list(caller: Caller, args: TaskListInput, note: AuditNote) -> dict[str, Any]:
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
    return {
        "tasks": [_list_item(task) for task in found],
        "next_cursor": next_cursor,
    }


def _list_item(task: Task) -> dict[str, Any]:
    return {
        "id": str(task.pk),
        "title": task.title,
        "status": task.status,
        "version": task.version,
        "next_step": clip(one_line(task.next_step), LIST_TEXT_BYTES),
        "blocker_count": len(task.blockers),
        "repository_ref": task.repository_ref,
        **readiness_json(task),
        "created_at": rfc3339(task.created_at),
        "updated_at": rfc3339(task.updated_at),
    }
