"""What "ready" means, as query expressions shared by the reads and task_claim_next.

A task is ready when it is `todo` (todo tasks have no claimant: a claim moves the task to
in_progress) and every task it is blocked by is `done` (docs/architecture.md). Both
are computed inside the query that reads the tasks, so a list or the recovery index costs no
extra query for them.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import (
    Aggregate,
    BooleanField,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
)

from continuity.models import Task, TaskDependency, TaskStatus
from core.statements import Returning
from projects.models import Project


class JoinedIds(Aggregate):
    """The ids of a group as one comma-separated text, on SQLite and PostgreSQL alike."""

    function = "GROUP_CONCAT"
    template = "%(function)s(%(expressions)s, ',')"
    output_field = TextField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            function="STRING_AGG",
            template="%(function)s(%(expressions)s::text, ',')",
            **extra,
        )


def open_dependencies(outer: str = "pk") -> QuerySet[TaskDependency]:
    """The dependencies of the outer query's task that are not done yet."""
    return TaskDependency.objects.filter(project=OuterRef("project"), task=OuterRef(outer)).exclude(
        blocked_by__status=TaskStatus.DONE
    )


def is_ready() -> Q:
    return Q(Q(status=TaskStatus.TODO), ~Exists(open_dependencies()))


def ready_tasks(project: Project) -> QuerySet[Task]:
    return Task.objects.filter(project=project).filter(is_ready())


def _joined(dependencies: QuerySet[TaskDependency]) -> Subquery:
    grouped = dependencies.order_by().values("task").annotate(ids=JoinedIds("blocked_by_id"))
    return Subquery(grouped.values("ids")[:1], output_field=TextField())


def _ready() -> ExpressionWrapper:
    return ExpressionWrapper(is_ready(), output_field=BooleanField())


def _readiness() -> dict[str, Any]:
    every = TaskDependency.objects.filter(project=OuterRef("project"), task=OuterRef("pk"))
    return {"blocked_ids": _joined(every), "ready": _ready()}


def with_readiness(tasks: QuerySet[Task]) -> QuerySet[Task]:
    """Tasks annotated with `blocked_ids` (every dependency) and `ready`, for the presenters."""
    return tasks.annotate(**_readiness())


# The same two values, returned by a task's UPDATE (core.statements.update_returning): a write
# answers with the task's readiness without reading the task again.
READINESS = Returning(_readiness)


def with_waiting(tasks: QuerySet[Task]) -> QuerySet[Task]:
    """Tasks annotated with `waiting_ids` (the dependencies not done yet) and `ready`."""
    return tasks.annotate(waiting_ids=_joined(open_dependencies()), ready=_ready())


def split_ids(joined: str | None) -> list[str]:
    """The ids of a JoinedIds text as canonical UUID strings, sorted so answers are stable
    (SQLite stores UUIDs as bare hex)."""
    if not joined:
        return []
    return sorted(str(uuid.UUID(part)) for part in joined.split(","))
