from __future__ import annotations

import base64
import binascii
import uuid
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q, QuerySet

from audit.recorder import AuditNote
from continuity.budget import clip, one_line
from continuity.inputs import TaskGetInput, TaskListInput
from continuity.models import OPEN_STATUSES, Task
from continuity.presenters import receipt_json, rfc3339, task_json
from core.access import Caller, Capability
from core.errors import ValidationError
from core.lookups import project_object
from core.operations import operation

RECENT_RECEIPTS = 10
LIST_TEXT_BYTES = 280


@operation("task_get", capability=Capability.READ, input_model=TaskGetInput, writes=False)
def task_get(caller: Caller, args: TaskGetInput, note: AuditNote) -> dict[str, Any]:
    """The whole task with its most recent work receipts."""
    note.target("task", args.task_id)
    task = project_object(Task, caller, args.task_id, missing="No such task in this project.")
    receipts = task.receipts.order_by("-created_at", "-id")[:RECENT_RECEIPTS]
    return {"task": task_json(task), "receipts": [receipt_json(r) for r in receipts]}


@operation("task_list", capability=Capability.READ, input_model=TaskListInput, writes=False)
def task_list(caller: Caller, args: TaskListInput, note: AuditNote) -> dict[str, Any]:
    """Tasks newest first, optionally by status ("open" = todo, in_progress, blocked)."""
    tasks: QuerySet[Task] = Task.objects.filter(project=caller.project)
    if args.status == "open":
        tasks = tasks.filter(status__in=OPEN_STATUSES)
    elif args.status:
        tasks = tasks.filter(status=args.status)
    if args.cursor:
        created_at, task_id = _decode_cursor(args.cursor)
        tasks = tasks.filter(
            Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=task_id)
        )
    page = list(tasks.order_by("-created_at", "-id")[: args.limit + 1])
    more = len(page) > args.limit
    page = page[: args.limit]
    return {
        "tasks": [_list_item(task) for task in page],
        "next_cursor": _encode_cursor(page[-1]) if more else None,
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
        "created_at": rfc3339(task.created_at),
        "updated_at": rfc3339(task.updated_at),
    }


def _encode_cursor(task: Task) -> str:
    raw = f"{task.created_at.isoformat()}|{task.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created_at, _, task_id = base64.urlsafe_b64decode(padded).decode().partition("|")
        moment = datetime.fromisoformat(created_at)
        if moment.tzinfo is None:
            raise ValueError("naive time")
        # In UTC here, not in the database adapter: a time that leaves datetime's range in UTC
        # (9999-12-31T23:59-14:00) raises OverflowError, which must be a validation_error.
        return moment.astimezone(UTC), uuid.UUID(task_id)
    except (ValueError, OverflowError, binascii.Error, UnicodeDecodeError):
        raise ValidationError(fields={"cursor": "is not a cursor returned by task_list"}) from None
