"""Memory, tasks, work receipts, idempotency records and running-summary state versions.

Every table carries project_id and every unique constraint includes the project (directly or
through the task), so the schema can later be distributed by project.
"""

from __future__ import annotations

import uuid

from django.db import models

from projects.models import Project

MEMORY_CONTENT_MAX = 16_000
STATE_BODY_MAX = 12_000


class MemoryKind(models.TextChoices):
    DECISION = "decision"
    NOTE = "note"


class TaskStatus(models.TextChoices):
    TODO = "todo"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    DONE = "done"
    CANCELLED = "cancelled"


OPEN_STATUSES = (TaskStatus.TODO, TaskStatus.IN_PROGRESS, TaskStatus.BLOCKED)

# docs/architecture.md, "The continuity protocol": done and cancelled are final.
TRANSITIONS: dict[str, frozenset[str]] = {
    TaskStatus.TODO: frozenset({TaskStatus.IN_PROGRESS, TaskStatus.BLOCKED, TaskStatus.CANCELLED}),
    TaskStatus.IN_PROGRESS: frozenset(
        {TaskStatus.BLOCKED, TaskStatus.DONE, TaskStatus.TODO, TaskStatus.CANCELLED}
    ),
    TaskStatus.BLOCKED: frozenset({TaskStatus.IN_PROGRESS, TaskStatus.TODO, TaskStatus.CANCELLED}),
    TaskStatus.DONE: frozenset(),
    TaskStatus.CANCELLED: frozenset(),
}


class Memory(models.Model):
    """An accepted decision (with rationale and source) or a durable note. Immutable.

    Its full-text index lives beside the model, made by migrations 0005 and 0007: on PostgreSQL
    a stored tsvector column (search_vector: the words, and terms for the project, the kind and
    the periods written in) with a GIN index, on SQLite the FTS5 table continuity_memory_fts.
    Only memory_search's SQL reads them.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: memory_bundle_order (project, id) serves every lookup by project
    # too.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=16, choices=MemoryKind.choices)
    title = models.CharField(max_length=200, blank=True)
    content = models.TextField()
    rationale = models.TextField(blank=True)
    source = models.CharField(max_length=500, blank=True)
    # No index of its own: memory_superseded_once (project, supersedes) serves every lookup,
    # with the project first (docs/scaling.md). RESTRICT, not PROTECT: a superseded decision
    # cannot be deleted alone, but goes with its project (whose deletion cascades to both).
    supersedes = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="superseded_by",
        db_index=False,
    )
    author = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "memories"
        indexes = [
            # The export reads a project's rows in id order from this index, from the first
            # row on: sorting a million wide rows spills to disk first (continuity.bundle).
            models.Index(fields=["project", "id"], name="memory_bundle_order"),
            models.Index(fields=["project", "-created_at"], name="memory_project_newest"),
            models.Index(fields=["project", "kind", "-created_at"], name="memory_project_kind"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=MemoryKind.values), name="memory_kind_known"
            ),
            # One memory supersedes another at most once: history stays a chain, not a tree.
            models.UniqueConstraint(
                fields=["project", "supersedes"], name="memory_superseded_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class Task(models.Model):
    """A stable goal (title, description) plus the current handoff, guarded by `version`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed with the id: see Memory.project.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    title = models.CharField(max_length=200)
    description = models.TextField()
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.TODO)
    next_step = models.TextField(blank=True)
    blockers = models.JSONField(default=list, blank=True)
    handoff_note = models.TextField(blank=True)
    repository_ref = models.JSONField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_by = models.CharField(max_length=150)
    updated_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The lease of an in_progress task's claim (continuity.leases): who holds it (the actor and
    # its session), for how long a renewal extends it, and until when. Cleared when the task
    # leaves in_progress; an in_progress task without one is free to any session.
    lease_actor = models.CharField(max_length=150, blank=True, default="")
    lease_session_ref = models.CharField(max_length=200, blank=True, default="")
    lease_seconds = models.PositiveIntegerField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [
            # The export's order: see memory_bundle_order.
            models.Index(fields=["project", "id"], name="task_bundle_order"),
            # task_claim_next's takeover: the lease that expired longest ago, in one index step
            # whatever the number of tasks.
            models.Index(
                fields=["project", "lease_expires_at"],
                name="task_lease_expiry",
                condition=models.Q(status="in_progress"),
            ),
            models.Index(fields=["project", "status", "-updated_at"], name="task_project_status"),
            models.Index(fields=["project", "-updated_at"], name="task_project_recent"),
            # task_claim_next and the ready list walk todo tasks oldest first.
            models.Index(fields=["project", "status", "created_at"], name="task_project_oldest"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=TaskStatus.values), name="task_status_known"
            ),
            models.CheckConstraint(
                condition=models.Q(version__gte=1), name="task_version_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.title


# A task waits on at most this many others: it keeps every task's entry (and the recovery index
# that lists up to 100 of them) bounded.
MAX_DEPENDENCIES = 20


class TaskDependency(models.Model):
    """`task` is blocked by `blocked_by` until that one is done; both in one project, no cycles
    (continuity.services.dependencies checks them)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    # Their indexes lead with project_id (below), so the table can be distributed by project.
    task = models.ForeignKey(
        Task, on_delete=models.CASCADE, related_name="dependencies", db_index=False
    )
    blocked_by = models.ForeignKey(
        Task, on_delete=models.CASCADE, related_name="dependents", db_index=False
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Readiness looks a task's dependencies up (the unique key's (project, task) prefix),
        # and a finished task's dependents (the index below); both lookups name the project.
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["project", "blocked_by"], name="dependency_project_blocked_by")
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "task", "blocked_by"], name="dependency_once"
            ),
            models.CheckConstraint(
                condition=~models.Q(task=models.F("blocked_by")), name="dependency_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} blocked by {self.blocked_by_id}"


class WorkReceipt(models.Model):
    """What one session did on one task: at most one per (task, session_ref)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed with the id: see Memory.project.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    # Indexed by receipt_task_newest, with the project first (docs/scaling.md).
    task = models.ForeignKey(
        Task, on_delete=models.CASCADE, related_name="receipts", db_index=False
    )
    session_ref = models.CharField(max_length=200)
    summary = models.TextField()
    tests = models.JSONField(default=list, blank=True)
    commits = models.JSONField(default=list, blank=True)
    next_step = models.TextField(blank=True)
    blockers = models.JSONField(default=list, blank=True)
    task_version = models.PositiveIntegerField()
    author = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The export's order: see memory_bundle_order.
            models.Index(fields=["project", "id"], name="receipt_bundle_order"),
            models.Index(fields=["project", "-created_at"], name="receipt_project_newest"),
            models.Index(fields=["project", "task", "-created_at"], name="receipt_task_newest"),
        ]
        constraints = [
            # (project, task) names one task: the project is there for distribution by project.
            models.UniqueConstraint(
                fields=["project", "task", "session_ref"], name="receipt_one_per_session"
            ),
        ]

    def __str__(self) -> str:
        return f"receipt {self.session_ref} on {self.task_id}"


class IdempotencyRecord(models.Model):
    """A fingerprint of the payload and the structured result; never the payload itself."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    operation = models.CharField(max_length=32)
    key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)
    result = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "operation", "key"], name="idempotency_key_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.operation}:{self.key}"


class StateVersion(models.Model):
    """One immutable version of an agent's running summary (docs/architecture.md)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed with the id: see Memory.project.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    agent = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    body = models.TextField()
    author = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The export's order: see memory_bundle_order.
            models.Index(fields=["project", "id"], name="state_bundle_order"),
            models.Index(fields=["project", "-created_at"], name="state_project_newest"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "agent", "version"], name="state_version_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.agent} v{self.version}"
