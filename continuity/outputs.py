"""The result shape of every continuity operation, as typed models.

Every operation returns one of these (built by continuity.presenters and the selectors); each
transport sends `model_dump(mode="json")` of it, fields in the order declared here. The same
models generate each MCP tool's outputSchema and the REST schema, so what a client is promised
is what it receives.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PlainSerializer

from core.access import CredentialKind, Role


class Output(BaseModel):
    """Base of every result model: exactly these fields, nothing else."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# In JSON a time is RFC 3339 in UTC to the millisecond ("2026-01-02T03:04:05.678Z"); its schema
# stays pydantic's "date-time".
Timestamp = Annotated[datetime, PlainSerializer(rfc3339, return_type=str, when_used="json")]
# "minimum": 1 rather than pydantic's "exclusiveMinimum": 0: the same rule, read by every
# validator alike.
PositiveInt = Annotated[int, Field(ge=1)]
Kind = Literal["decision", "note"]
Status = Literal["todo", "in_progress", "blocked", "done", "cancelled"]
OpenStatus = Literal["todo", "in_progress", "blocked"]
TestResult = Literal["passed", "failed", "skipped", "error"]
LimitName = Literal["memory_limit", "task_limit", "receipt_limit"]
CountName = Literal[
    "memories",
    "decisions",
    "notes",
    "tasks",
    "open_tasks",
    "ready_tasks",
    "receipts",
    "repositories",
]


class ProjectOut(Output):
    id: uuid.UUID
    slug: str
    name: str


class RepositoryRefOut(Output):
    repository: str
    branch: str | None
    commit: str | None


# --- server_identity -----------------------------------------------------------------------


class PrincipalOut(Output):
    actor: str
    role: Role
    scopes: list[str]
    credential: CredentialKind


class WriteContextOut(Output):
    resource: str
    instance: str
    project: str


class IdentityOut(Output):
    resource: str
    instance: str
    project: ProjectOut
    principal: PrincipalOut
    write_context: WriteContextOut


# --- memory --------------------------------------------------------------------------------


class MemoryAckOut(Output):
    id: uuid.UUID
    kind: Kind
    title: str
    supersedes: uuid.UUID | None
    created_at: Timestamp


class MemoryOut(Output):
    id: uuid.UUID
    kind: Kind
    title: str
    content: str
    rationale: str
    source: str
    supersedes: uuid.UUID | None
    superseded_by: uuid.UUID | None
    author: str
    created_at: Timestamp


class MemoryGetOut(Output):
    memory: MemoryOut


class SearchHitOut(Output):
    id: uuid.UUID
    kind: Kind
    title: str
    preview: str
    supersedes: uuid.UUID | None
    created_at: Timestamp


class MemorySearchOut(Output):
    query: str
    results: list[SearchHitOut]


class MemoryListOut(Output):
    memories: list[SearchHitOut]
    next_cursor: str | None


# --- tasks ---------------------------------------------------------------------------------


class TaskAckOut(Output):
    id: uuid.UUID
    title: str
    status: Status
    version: PositiveInt
    created_at: Timestamp


class LeaseHolderOut(Output):
    actor: str
    session_ref: str


class LeaseOut(Output):
    # The claiming session and when its lease ends (server time); it may have ended already.
    holder: LeaseHolderOut
    expires_at: Timestamp


class TaskOut(Output):
    id: uuid.UUID
    title: str
    description: str
    status: Status
    version: PositiveInt
    next_step: str
    blockers: list[str]
    handoff_note: str
    repository_ref: RepositoryRefOut | None
    blocked_by: list[uuid.UUID]
    ready: bool
    lease: LeaseOut | None
    created_by: str
    updated_by: str
    created_at: Timestamp
    updated_at: Timestamp


class TestRunOut(Output):
    name: str
    result: TestResult


class ReceiptOut(Output):
    id: uuid.UUID
    task_id: uuid.UUID
    session_ref: str
    summary: str
    tests: list[TestRunOut]
    commits: list[str]
    next_step: str
    blockers: list[str]
    task_version: PositiveInt
    author: str
    created_at: Timestamp


class TaskGetOut(Output):
    task: TaskOut
    receipts: list[ReceiptOut]


class TaskListItemOut(Output):
    id: uuid.UUID
    title: str
    status: Status
    version: PositiveInt
    next_step: str
    blocker_count: NonNegativeInt
    repository_ref: RepositoryRefOut | None
    blocked_by: list[uuid.UUID]
    ready: bool
    created_at: Timestamp
    updated_at: Timestamp


class TaskListOut(Output):
    tasks: list[TaskListItemOut]
    next_cursor: str | None


class ReceiptListOut(Output):
    receipts: list[ReceiptOut]
    next_cursor: str | None


class TaskUpdateOut(Output):
    task: TaskOut
    receipt: ReceiptOut | None


class TaskClaimOut(Output):
    # None: no task is ready (not an error).
    task: TaskOut | None


class TaskHeartbeatOut(Output):
    task_id: uuid.UUID
    version: PositiveInt
    lease: LeaseOut


class TaskLeaseReleaseOut(Output):
    task: TaskOut
    # The lease that was ended; None when the task held none.
    released: LeaseOut | None


# --- running summary -----------------------------------------------------------------------


class StateAckOut(Output):
    agent: str
    version: PositiveInt
    chars: NonNegativeInt
    created_at: Timestamp


class StateOut(Output):
    agent: str
    version: PositiveInt
    body: str
    author: str
    created_at: Timestamp


class StateGetOut(Output):
    state: StateOut


# --- continuity_context (texts are previews, cut to the response's byte budget) -------------


class ContextRepositoryOut(Output):
    repository: str
    provider: str
    default_branch: str
    url: str


class ContextMemoryOut(Output):
    id: uuid.UUID
    kind: Kind
    title: str
    preview: str
    chars: NonNegativeInt
    supersedes: uuid.UUID | None
    created_at: Timestamp


class ContextLeaseOut(Output):
    holder: LeaseHolderOut
    expires_at: Timestamp
    # live: held until expires_at; expiring: yours, and under a third of it is left; expired:
    # task_claim_next will take it over.
    state: Literal["live", "expiring", "expired"]


class ContextTaskOut(Output):
    id: uuid.UUID
    title: str
    status: OpenStatus
    version: PositiveInt
    next_step: str
    blocker_count: NonNegativeInt
    repository_ref: RepositoryRefOut | None
    ready: bool
    # The dependencies not done yet: their number, and the first few ids (task_get has all).
    waiting_on_count: NonNegativeInt
    waiting_on: Annotated[list[uuid.UUID], Field(max_length=3)]
    lease: ContextLeaseOut | None
    updated_at: Timestamp


class ContextReceiptOut(Output):
    id: uuid.UUID
    task_id: uuid.UUID
    session_ref: str
    summary: str
    tests: dict[TestResult, PositiveInt]
    commit_count: NonNegativeInt
    created_at: Timestamp


class ContextStateOut(Output):
    agent: str
    version: PositiveInt
    preview: str
    chars: NonNegativeInt
    created_at: Timestamp


class LimitsOut(Output):
    memory_limit: NonNegativeInt
    task_limit: NonNegativeInt
    receipt_limit: NonNegativeInt
    clamped: dict[LimitName, NonNegativeInt]
    count_cap: PositiveInt
    counts_capped: list[CountName]


class CountsOut(Output):
    memories: NonNegativeInt
    decisions: NonNegativeInt
    notes: NonNegativeInt
    tasks: NonNegativeInt
    open_tasks: NonNegativeInt
    ready_tasks: NonNegativeInt
    receipts: NonNegativeInt
    repositories: NonNegativeInt


class ContextOut(Output):
    project: ProjectOut
    repositories: list[ContextRepositoryOut]
    memories: list[ContextMemoryOut]
    tasks: list[ContextTaskOut]
    receipts: list[ContextReceiptOut]
    state: ContextStateOut | None
    limits: LimitsOut
    counts: CountsOut
