"""A task's `blocked_by` set: tasks of its own project, and never a cycle.

Called by task_create and task_update inside their transaction, so a refusal leaves nothing
behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db import connection

from continuity.models import Task, TaskDependency
from core.access import Caller
from core.errors import NotFound, ValidationError
from projects.models import Project

_MISSING = "No such task in this project (blocked_by)."


def set_blocked_by(
    caller: Caller, task: Task, ids: Iterable[uuid.UUID], *, new: bool = False
) -> None:
    """Make `ids` the whole set of tasks that `task` is blocked by."""
    wanted = list(dict.fromkeys(ids))
    if task.pk in wanted:
        raise ValidationError(fields={"blocked_by": "a task cannot be blocked by itself"})
    if wanted:
        found = Task.objects.filter(project=caller.project, pk__in=wanted).count()
        if found != len(wanted):
            # Another project's id answers like an unknown one: existence never leaks.
            raise NotFound(_MISSING)
    current = (
        set()
        if new
        else set(TaskDependency.objects.filter(task=task).values_list("blocked_by_id", flat=True))
    )
    added = [pk for pk in wanted if pk not in current]
    if added and not new:
        # A new task has no dependents yet, so it cannot close a cycle; an existing one can.
        _lock_dependencies(caller.project)
        _refuse_cycles(task, added)
    removed = current - set(wanted)
    if removed:
        TaskDependency.objects.filter(task=task, blocked_by_id__in=removed).delete()
    TaskDependency.objects.bulk_create(
        TaskDependency(project=caller.project, task=task, blocked_by_id=pk) for pk in added
    )


def _lock_dependencies(project: Project) -> None:
    """Serialize dependency changes per project: two updates adding A -> B and B -> A at once
    would each pass the cycle check on its own. FOR NO KEY UPDATE does not block the inserts
    whose foreign keys point at the project (they take KEY SHARE). SQLite serializes writers."""
    list(
        Project.objects.select_for_update(no_key=True)
        .filter(pk=project.pk)
        .values_list("pk", flat=True)
    )


def _refuse_cycles(task: Task, added: list[uuid.UUID]) -> None:
    if not _reaches(added, task.pk):
        return
    # Name one dependency that closes the cycle (this path runs only to refuse).
    culprit = next((pk for pk in added if _reaches([pk], task.pk)), added[0])
    raise ValidationError(
        fields={
            "blocked_by": f"would make a cycle: task {culprit} is already blocked, directly "
            "or through others, by this task"
        }
    )


def _reaches(starts: list[uuid.UUID], target: uuid.UUID) -> bool:
    """Whether `target` is among `starts` or the tasks they are blocked by, transitively: one
    recursive query (UNION, not UNION ALL, so it ends even on data that has a cycle)."""
    dependency = TaskDependency._meta.db_table
    prep = Task._meta.pk.get_db_prep_value
    marks = ", ".join(["%s"] * len(starts))
    # Only table names and placeholders go into the text; the ids are parameters.
    sql = (
        f"WITH RECURSIVE reach(id) AS ("  # noqa: S608
        f"SELECT id FROM {Task._meta.db_table} WHERE id IN ({marks}) "
        f"UNION SELECT d.blocked_by_id FROM {dependency} d JOIN reach r ON d.task_id = r.id"
        f") SELECT 1 FROM reach WHERE id = %s LIMIT 1"
    )
    params = [prep(pk, connection) for pk in [*starts, target]]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone() is not None
