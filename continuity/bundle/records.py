"""The record types of a bundle, in the order they come, and how each is read from the database.

Every type is read in one ordered, streamed query: by id, or for audit events by their place in
the chain. A record never carries the project's id (the header names the project), except audit
events, whose digest covers it.

On PostgreSQL the database spells the values (times with `to_char`, ids with `::text`) and,
for every type whose fields are plain columns (memories and audit events among them), writes
each record's canonical JSON itself (database_json.py): turning a million rows into Python
datetimes, UUIDs and dicts only to spell and encode them again was most of an export's time.
Elsewhere the ORM reads them and Python spells them; both give the same bytes
(tests/continuity/bundle/test_spelling.py).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import (
    DateTimeField,
    Field,
    ForeignKey,
    JSONField,
    Model,
    QuerySet,
    UUIDField,
)

from audit.export import COLUMNS as AUDIT_COLUMNS
from audit.export import chain_rows
from audit.models import AuditEvent
from audit.state import project_chains
from continuity.bundle.database_json import canonical_rows
from continuity.bundle.format import canonical, encode_time
from continuity.models import Memory, StateVersion, Task, TaskDependency, WorkReceipt
from projects.models import Membership, Project, ProjectRepository

CHUNK = 2000
# Rows a fetch from a server-side cursor (PostgreSQL): a few MB of text at most.
FETCH = 5000
# A time as encode_time spells it, in the database.
_TIME_SQL = """to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""


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
        if connection.vendor == "postgresql" and self._own_columns():
            documents = self._read_spelled(project)
        else:
            documents = self._read_models(project)
        complete = self.complete
        for document in documents:
            if complete is not None:
                complete(document)
            yield document

    def bodies(self, project: Project) -> Iterator[bytes]:
        """Each record's canonical JSON, its "record" key included (format.canonical): on
        PostgreSQL written by the database where every field is a plain column of the table."""
        if connection.vendor == "postgresql" and self._plain_columns():
            yield from self._bodies_from_database(project)
            return
        for document in self.read(project):
            document["record"] = self.name
            yield canonical(document)

    def _read_models(self, project: Project) -> Iterator[dict[str, Any]]:
        names = [name for name, _ in self.fields]
        for values in self.queryset(project).iterator(chunk_size=CHUNK):
            yield {name: _plain(value) for name, value in zip(names, values, strict=True)}

    def _own_columns(self) -> bool:
        """Every field is a column of the type's own table (no join)."""
        return all("__" not in column for _, column in self.fields)

    def _owner_column(self) -> str:
        """The column that names the project a row belongs to."""
        return "id" if self.model is Project else "project_id"

    def _plain_columns(self) -> bool:
        """Own columns, none of them JSON (jsonb's text has spaces and its own key order), and
        nothing to complete in Python."""
        meta = self.model._meta
        return (
            self.complete is None
            and self._own_columns()
            and not any(isinstance(meta.get_field(column), JSONField) for _, column in self.fields)
        )

    def _spelled_columns(self) -> list[tuple[str, str]]:
        """(field in the record, SQL giving its value as the bundle spells it), in order."""
        meta = self.model._meta
        table = connection.ops.quote_name(meta.db_table)
        spelled: list[tuple[str, str]] = []
        for name, column in self.fields:
            model_field = meta.get_field(column)  # a foreign key by its attname (task_id)
            assert isinstance(model_field, Field)
            quoted = f"{table}.{connection.ops.quote_name(model_field.column)}"
            spelled.append((name, _spelling(model_field, quoted)))
        return spelled

    def _bodies_from_database(self, project: Project) -> Iterator[bytes]:
        table = connection.ops.quote_name(self.model._meta.db_table)
        owner = self._owner_column()
        yield from canonical_rows(
            self.name,
            self._spelled_columns(),
            table=table,
            where=f"{table}.{owner} = %s",
            order=f"{table}.id",
            params=[project.pk],
        )

    def _read_spelled(self, project: Project) -> Iterator[dict[str, Any]]:
        names = [name for name, _ in self.fields]
        meta = self.model._meta
        table = connection.ops.quote_name(meta.db_table)
        spelled = [expression for _, expression in self._spelled_columns()]
        decoders = [
            (index, model_field)
            for index, (_, column) in enumerate(self.fields)
            if isinstance(model_field := meta.get_field(column), JSONField)
        ]
        owner = self._owner_column()
        # Names from the model's metadata; the project's id is a parameter.
        sql = (
            f"SELECT {', '.join(spelled)} FROM {table} "  # noqa: S608
            f"WHERE {table}.{owner} = %s ORDER BY {table}.id"
        )
        with connection.chunked_cursor() as cursor:
            cursor.execute(sql, [project.pk])
            while rows := cursor.fetchmany(FETCH):
                for values in rows:
                    document = dict(zip(names, values, strict=True))
                    for index, json_field in decoders:
                        name = names[index]
                        text = document[name]
                        if text is not None:  # stored as jsonb, read as text (Django's loader)
                            document[name] = json.loads(text, cls=json_field.decoder)
                    yield document


def _spelling(model_field: Any, quoted: str) -> str:
    """The column as SQL that gives the value as the bundle spells it (see _plain)."""
    target = model_field.target_field if isinstance(model_field, ForeignKey) else model_field
    if isinstance(target, DateTimeField):
        return _TIME_SQL.format(quoted)
    if isinstance(target, UUIDField):
        return f"{quoted}::text"
    return quoted


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


def audit_event_bodies(project: Project) -> Iterator[bytes]:
    """The project's audit chains, each from its first event, in chain order (archived chains
    an import brought first, its live chain last: audit.state.project_chains), as canonical
    JSON with exactly the fields their digests and hashes cover (audit.chain), "record" key
    included; on PostgreSQL written by the database."""
    for chain_name in project_chains(project):
        if connection.vendor == "postgresql":
            yield from _audit_bodies_from_database(chain_name)
        else:
            yield from _audit_bodies_from_models(chain_name)


def _audit_bodies_from_models(chain_name: str) -> Iterator[bytes]:
    for row in chain_rows(chain_name):
        document = {name: row[name] for name in AUDIT_COLUMNS}
        document["record"] = AUDIT_EVENT
        yield canonical(document)


# audit.export._canonical's spelling, in SQL: ids as text, the time as encode_time spells it,
# hashes never null. user_id is an integer; every other field is text as stored.
_AUDIT_SPELLING = {
    "id": "id::text",
    "occurred_at": _TIME_SQL.format("occurred_at"),
    "project_id": "project_id::text",
    "prev_hash": "COALESCE(prev_hash, '')",
    "digest": "COALESCE(digest, '')",
    "hash": "COALESCE(hash, '')",
}


def _audit_bodies_from_database(chain_name: str) -> Iterator[bytes]:
    """One ordered scan of the chain (its index on (chain, seq) gives the order; a gap in
    positions is simply skipped over, as chain_rows does)."""
    keys = [
        (name, _AUDIT_SPELLING.get(name, connection.ops.quote_name(name))) for name in AUDIT_COLUMNS
    ]
    table = connection.ops.quote_name(AuditEvent._meta.db_table)
    yield from canonical_rows(
        AUDIT_EVENT,
        keys,
        table=table,
        where=f"{table}.chain = %s AND {table}.seq IS NOT NULL",
        order=f"{table}.seq",
        params=[chain_name],
    )
