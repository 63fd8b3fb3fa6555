"""The dashboard's task list and what a task page shows around the task: which tasks it waits
on and which wait on it.

A task that waits on others must not look like a plain todo: each row carries `waiting_ids`
(the tasks it is blocked by that are not done) and `ready` (todo and nothing to wait for), from
continuity.readiness, computed inside the query that reads the rows. The number of queries is
fixed: the rows, the counts per status, how many rows follow this page, and the titles of the
tasks the page's rows wait on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal
from uuid import UUID

from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from pydantic import Field, StrictInt

from audit.recorder import AuditNote
from continuity.inputs import Cursor
from continuity.models import OPEN_STATUSES, Task, TaskDependency, TaskStatus
from continuity.presenters import lease_out
from continuity.readiness import is_ready, split_ids, with_waiting
from continuity.selectors.cursors import page
from core.access import Caller, Capability
from core.operations import operation
from core.validation import Input
from web.selectors.paging import rows_after

BoardStatus = Literal["open", "ready", "todo", "in_progress", "blocked", "done", "cancelled", "all"]
# The status filter's choices, in the order the page offers them, with their names there.
BOARD_STATUSES: dict[str, str] = {
    "open": "Open",
    "ready": "Ready",
    "todo": "To do",
    "in_progress": "In progress",
    "blocked": "Blocked",
    "done": "Done",
    "cancelled": "Cancelled",
    "all": "All",
}
# Each filter's heading on the page.
BOARD_HEADINGS: dict[str, str] = {
    "open": "Open tasks",
    "ready": "Tasks ready to claim",
    "todo": "Tasks to do",
    "in_progress": "Tasks in progress",
    "blocked": "Blocked tasks",
    "done": "Done tasks",
    "cancelled": "Cancelled tasks",
    "all": "All tasks",
}
# Waiting-on links a dashboard row shows before "and N more" (its task page lists them all).
WAITING_SHOWN = 3
DEPENDENTS_SHOWN = 20


class TaskBoardInput(Input):
    status: BoardStatus = "open"
    limit: Annotated[StrictInt, Field(ge=1, le=100)] = 25
    cursor: Cursor | None = None


@dataclass(frozen=True)
class TaskLink:
    id: str
    title: str
    status: str


@dataclass(frozen=True)
class BoardRow:
    task: Task
    ready: bool
    waiting: list[TaskLink]  # the first WAITING_SHOWN tasks it waits on
    waiting_count: int  # how many it waits on in all

    @property
    def waiting_more(self) -> int:
        return self.waiting_count - len(self.waiting)

    @property
    def lease(self) -> dict[str, Any] | None:
        lease = lease_out(self.task)
        return None if lease is None else lease.model_dump(mode="json")

    @property
    def lease_expired(self) -> bool:
        expires = self.task.lease_expires_at
        return expires is not None and expires <= timezone.now()


@dataclass(frozen=True)
class TaskBoard:
    rows: list[BoardRow]
    next_cursor: str | None
    more: int  # matching tasks after this page
    counts: dict[str, int]  # per BOARD_STATUSES key, over the whole project


@operation("task_board", capability=Capability.READ, input_model=TaskBoardInput, writes=False)
def task_board(caller: Caller, args: TaskBoardInput, note: AuditNote) -> TaskBoard:
    """Tasks of one status (open ones by default) newest first, each with its readiness and
    the tasks it waits on; the project's count of each status; how many more follow."""
    note.target("project", caller.project.pk)
    tasks = _with_status(with_waiting(Task.objects.filter(project=caller.project)), args.status)
    tasks = tasks.defer("description", "handoff_note")
    found, next_cursor = page(tasks, cursor=args.cursor, limit=args.limit, listing="task_board")
    more = rows_after(tasks, found[-1]).count() if next_cursor else 0
    waits = {task.pk: split_ids(task.waiting_ids) for task in found}  # type: ignore[attr-defined]
    shown = {pk for ids in waits.values() for pk in ids[:WAITING_SHOWN]}
    titles = task_links(caller, shown)
    rows = [
        BoardRow(
            task=task,
            ready=bool(task.ready),  # type: ignore[attr-defined]
            waiting=[titles[pk] for pk in waits[task.pk][:WAITING_SHOWN] if pk in titles],
            waiting_count=len(waits[task.pk]),
        )
        for task in found
    ]
    return TaskBoard(rows, next_cursor, more, status_counts(caller))


def _with_status(tasks: QuerySet[Task], status: str) -> QuerySet[Task]:
    if status == "open":
        return tasks.filter(status__in=OPEN_STATUSES)
    if status == "ready":
        return tasks.filter(is_ready())
    if status == "all":
        return tasks
    return tasks.filter(status=status)


def status_counts(caller: Caller) -> dict[str, int]:
    """How many of the project's tasks each filter shows, in one query."""
    per_status = {status: Count("pk", filter=Q(status=status)) for status in TaskStatus.values}
    counts = Task.objects.filter(project=caller.project).aggregate(
        **per_status,
        open=Count("pk", filter=Q(status__in=OPEN_STATUSES)),
        ready=Count("pk", filter=is_ready()),
        all=Count("pk"),
    )
    return {key: int(counts[key] or 0) for key in BOARD_STATUSES}


def task_links(caller: Caller, ids: set[str]) -> dict[str, TaskLink]:
    """Titles and statuses of the project's tasks among `ids` (at most a page's worth)."""
    if not ids:
        return {}
    found = Task.objects.filter(project=caller.project, pk__in=ids).values_list(
        "pk", "title", "status"
    )
    return {str(pk): TaskLink(str(pk), title, status) for pk, title, status in found}


@dataclass(frozen=True)
class Dependents:
    tasks: list[TaskLink]
    total: int

    @property
    def more(self) -> int:
        return self.total - len(self.tasks)


def dependents(caller: Caller, task_id: UUID) -> Dependents:
    """The tasks that wait on `task_id` (the first DEPENDENTS_SHOWN, oldest first) and how
    many there are: two queries."""
    links = TaskDependency.objects.filter(project=caller.project, blocked_by_id=task_id)
    shown = links.select_related("task").order_by("created_at", "id")[:DEPENDENTS_SHOWN]
    tasks = [TaskLink(str(d.task.pk), d.task.title, d.task.status) for d in shown]
    total = len(tasks) if len(tasks) < DEPENDENTS_SHOWN else links.count()
    return Dependents(tasks, total)
