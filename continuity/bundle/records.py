"""The record types of a bundle, in the order they come, and how each is read from the database.

Every type is read in one ordered, streamed query (`iterator(chunk_size=...)`): by id, or for
audit events by their place in the chain. A record never carries the project's id (the header
names the project), except audit events, whose digest covers it.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Model, QuerySet

from audit.export import COLUMNS as AUDIT_COLUMNS
from audit.export import chain_rows
from audit.state import project_chains
from continuity.bundle.format import encode_time
from continuity.models import Memory, StateVersion, Task, TaskDependency, WorkReceipt
from projects.models import Membership, Project, ProjectRepository

CHUNK = 2000


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return encode_time(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


@dataclass(frozen=True)
class RecordType:
    name: str
    model: type[Model]
    # (field in the record, column read from the database)
    fields: tuple[tuple[str, str], ...]
    complete: Callable[[dict[str, Any]], None] | None = None

    def queryset(self, project: Project) -> QuerySet[Any, Any]:
        columns = [column for _, column in self.fields]
        owner = "pk" if self.model is Project else "project_id"
        rows = self.model._default_manager.filter(**{owner: project.pk}).order_by("pk")
        return rows.values_list(*columns)

    def read(self, project: Project) -> Iterator[dict[str, Any]]:
        names = [name for name, _ in self.fields]
        for values in self.queryset(project).iterator(chunk_size=CHUNK):
            document = {name: _plain(value) for name, value in zip(names, values, strict=True)}
            if self.complete is not None:
                self.complete(document)
            yield document


LEASE_COLUMNS = ("lease_actor", "lease_session_ref", "lease_seconds", "lease_expires_at")


def _lease(document: dict[str, Any]) -> None:
    """The task's lease as of the export (continuity.leases), or null: one nested value, as the
    task's JSON shows it, in place of its four columns."""
    actor, session_ref, seconds, expires_at = (document.pop(name) for name in LEASE_COLUMNS)
    document["lease"] = (
        None
        if expires_at is None
        else {
            "holder": {"actor": actor, "session_ref": session_ref},
            "seconds": seconds,
            "expires_at": expires_at,
        }
    )


def _same(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, name) for name in names)


PROJECT = RecordType(
    "project", Project, _same("id", "slug", "name", "lease_seconds", "created_at", "updated_at")
)
REPOSITORY = RecordType(
    "repository",
    ProjectRepository,
    (
        *_same("id", "commit_url_template", "branch_url_template", "created_at"),
        ("repository_id", "repository__id"),
        ("provider", "repository__provider"),
        ("owner", "repository__owner"),
        ("name", "repository__name"),
        ("url", "repository__url"),
        ("default_branch", "repository__default_branch"),
    ),
)
MEMBERSHIP = RecordType(
    "membership",
    Membership,
    (
        *_same("id", "role", "created_at", "updated_at"),
        ("username", "user__username"),
        ("email", "user__email"),
    ),
)
MEMORY = RecordType(
    "memory",
    Memory,
    (
        *_same("id", "kind", "title", "content", "rationale", "source", "author", "created_at"),
        ("supersedes", "supersedes_id"),
    ),
)
TASK = RecordType(
    "task",
    Task,
    _same(
        "id",
        "title",
        "description",
        "status",
        "next_step",
        "blockers",
        "handoff_note",
        "repository_ref",
        "version",
        "created_by",
        "updated_by",
        "created_at",
        "updated_at",
        *LEASE_COLUMNS,
    ),
    complete=_lease,
)
DEPENDENCY = RecordType(
    "task_dependency",
    TaskDependency,
    (*_same("id", "created_at"), ("task", "task_id"), ("blocked_by", "blocked_by_id")),
)
RECEIPT = RecordType(
    "receipt",
    WorkReceipt,
    (
        *_same(
            "id",
            "session_ref",
            "summary",
            "tests",
            "commits",
            "next_step",
            "blockers",
            "task_version",
            "author",
            "created_at",
        ),
        ("task", "task_id"),
    ),
)
STATE_VERSION = RecordType(
    "state_version", StateVersion, _same("id", "agent", "version", "body", "author", "created_at")
)

# In this order: whatever a record points to comes before it (a memory's predecessor may come
# after it: memories are ordered by id, and the import checks supersession at its end).
TYPES: tuple[RecordType, ...] = (
    PROJECT,
    REPOSITORY,
    MEMBERSHIP,
    MEMORY,
    TASK,
    DEPENDENCY,
    RECEIPT,
    STATE_VERSION,
)
AUDIT_EVENT = "audit_event"
NAMES: tuple[str, ...] = (*(kind.name for kind in TYPES), AUDIT_EVENT)


def audit_events(project: Project) -> Iterator[dict[str, Any]]:
    """The project's audit chains, each from its first event, in chain order (archived chains
    an import brought first, its live chain last: audit.state.project_chains), canonically
    spelled: exactly the fields their digests and hashes cover (audit.chain)."""
    for chain_name in project_chains(project):
        for row in chain_rows(chain_name):
            yield {name: row[name] for name in AUDIT_COLUMNS}
