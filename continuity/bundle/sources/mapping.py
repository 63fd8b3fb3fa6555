"""What an importer makes of another tool's files, printed as a dry run and written by `apply`:
new ids and one transaction, the source's times where it has them."""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction

from audit.models import Outcome
from audit.recorder import record
from continuity.bundle.load import times_as_given
from continuity.models import MAX_DEPENDENCIES, Memory, Task, TaskDependency, TaskStatus
from core.access import Role
from projects.callers import operator_caller
from projects.models import Membership, Project
from projects.permissions import sync_object_permissions

OPERATION = "project_import"


class ImportRefused(ValueError):
    """The mapping cannot be written (no such owner, the slug is taken)."""


@dataclass
class MappedTask:
    key: str  # the source's id
    title: str
    description: str
    status: TaskStatus
    author: str = "import"
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None
    blocked_by: list[str] = field(default_factory=list)  # source ids
    id: uuid.UUID = field(default_factory=uuid.uuid4)


@dataclass
class MappedMemory:
    kind: str  # decision | note
    title: str
    content: str
    rationale: str = ""
    source: str = ""
    author: str = "import"
    created_at: dt.datetime | None = None


@dataclass
class Mapping:
    tool: str
    fingerprint: str  # SHA-256 of the source files, for the audit event
    tasks: list[MappedTask] = field(default_factory=list)
    memories: list[MappedMemory] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)  # what cannot be mapped, and why
    mapped: list[str] = field(default_factory=list)  # "source -> what it became"

    def lines(self) -> Iterator[str]:
        yield f"From {self.tool}: {len(self.tasks)} tasks, {len(self.memories)} memories"
        yield from (f"  {line}" for line in self.mapped)
        for line in self.unmapped:
            yield f"  cannot map: {line}"

    def link(self) -> None:
        """Keep the dependencies that name a task of the mapping, at most MAX_DEPENDENCIES a
        task and never a cycle; report the others."""
        keys = {task.key: task for task in self.tasks}
        edges: dict[str, list[str]] = {}
        for task in self.tasks:
            kept: list[str] = []
            for other in task.blocked_by:
                if other not in keys:
                    self.unmapped.append(f"{task.key} blocked by {other}: no such task")
                elif len(kept) >= MAX_DEPENDENCIES:
                    self.unmapped.append(f"{task.key} blocked by {other}: too many dependencies")
                elif _reaches(edges, other, task.key):
                    self.unmapped.append(f"{task.key} blocked by {other}: a cycle")
                else:
                    kept.append(other)
                    edges.setdefault(task.key, []).append(other)
            task.blocked_by = kept


def _reaches(edges: dict[str, list[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, []))
    return False


def fingerprint(chunks: list[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(hashlib.sha256(chunk).digest())
    return "sha256:" + digest.hexdigest()


def _new_project(slug: str, owner: str) -> Project:
    """The project the mapping goes into, owned by `owner`; refused if either is wrong."""
    user = get_user_model()._default_manager.filter(username=owner).first()
    if user is None:
        raise ImportRefused(f"--owner {owner}: no such user here")
    if Project.objects.filter(slug=slug).exists():
        raise ImportRefused(f"a project {slug} exists already: pick another --slug")
    project = Project.objects.create(slug=slug, name=slug.replace("-", " ").title())
    Membership.objects.create(project=project, user=user, role=Role.OWNER)
    sync_object_permissions(project, user)
    return project


@transaction.atomic(durable=True)
def apply(mapping: Mapping, *, slug: str, owner: str, operator: str) -> Project:
    now = dt.datetime.now(dt.UTC)
    project = _new_project(slug, owner)
    ids = {task.key: task.id for task in mapping.tasks}
    with times_as_given():
        Task.objects.bulk_create(_task_row(project, task, now) for task in mapping.tasks)
        TaskDependency.objects.bulk_create(
            TaskDependency(
                project=project,
                task_id=task.id,
                blocked_by_id=ids[other],
                created_at=task.created_at or now,
            )
            for task in mapping.tasks
            for other in task.blocked_by
        )
        Memory.objects.bulk_create(
            Memory(
                project=project,
                kind=memory.kind,
                title=memory.title[:200],
                content=memory.content,
                rationale=memory.rationale,
                source=memory.source[:500],
                author=memory.author[:150],
                created_at=memory.created_at or now,
            )
            for memory in mapping.memories
        )
    caller = operator_caller(project, label=operator)
    record(
        caller, OPERATION, Outcome.SUCCESS, target_type=mapping.tool, target_id=mapping.fingerprint
    )
    return project


def _task_row(project: Project, task: MappedTask, now: dt.datetime) -> Task:
    return Task(
        id=task.id,
        project=project,
        title=task.title[:200],
        description=task.description,
        status=task.status,
        created_by=task.author[:150],
        updated_by=task.author[:150],
        created_at=task.created_at or now,
        updated_at=task.updated_at or task.created_at or now,
    )
