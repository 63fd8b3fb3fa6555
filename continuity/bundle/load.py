"""A checked bundle put into the database: all or nothing, in one transaction.

Ids, versions, times, supersession and dependencies are kept as the bundle has them. So a bundle
goes into another instance (or into this one after the project and its audit chain are gone),
never twice into one: a project id, slug or audit chain already here is refused before anything
is written, and so is a record whose id another project holds (docs/bundle.md).

The audit events are inserted in chain order with their own fields and digests; the database's
trigger links them again, and since a link depends only on the fields, the position and the link
before it, they get the very hashes they had: the source's chain, and its checkpoints, verify
here. The import is the next event of that chain and names the bundle's digest.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, models, transaction

from audit import chain as audit_chain
from audit.models import AuditChainHead, AuditEvent, Outcome
from audit.recorder import SecurityContext, record, record_security_event
from continuity.bundle.copy import copy_rows
from continuity.bundle.format import BundleError, Reader, decode_time
from continuity.bundle.records import AUDIT_EVENT, NAMES
from continuity.models import Memory, StateVersion, Task, TaskDependency, WorkReceipt
from core.access import ActorType, CredentialKind, Role
from projects.callers import operator_caller
from projects.models import Membership, Project, ProjectRepository, Repository
from projects.permissions import sync_object_permissions

BATCH = 1000
OPERATION = "project_import"


@dataclass
class ImportReport:
    project_id: str = ""
    slug: str = ""
    digest: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    members: list[str] = field(default_factory=list)  # "username (role)" matched here
    left_out: list[str] = field(default_factory=list)  # memberships whose user is not here
    dry_run: bool = False

    def lines(self) -> Iterator[str]:
        verb = "Would import" if self.dry_run else "Imported"
        yield f"{verb} project {self.slug} ({self.project_id}) from bundle {self.digest}"
        for name in NAMES:
            yield f"  {name}: {self.counts.get(name, 0)}"
        for member in self.members:
            yield f"  member: {member}"
        for member in self.left_out:
            yield f"  left out (no such user here): {member}"


class _DryRun(Exception):
    """Raised to roll a dry run back."""


def import_bundle(
    lines: Iterable[bytes],
    *,
    slug: str | None = None,
    owner: str | None = None,
    dry_run: bool = False,
    operator: str = "manage.py project_import",
) -> ImportReport:
    """Import a bundle; raises BundleError (audited) and leaves nothing when it is refused."""
    report = ImportReport(dry_run=dry_run)
    try:
        with transaction.atomic(durable=True):
            _Loader(report, slug=slug, owner=owner, operator=operator).run(Reader(lines))
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    except IntegrityError as error:
        _refused(operator)
        raise BundleError(
            "a record's id is already used in this instance, or points to a record the bundle "
            f"lacks; nothing was imported ({str(error).splitlines()[0][:200]})"
        ) from None
    except BundleError:
        _refused(operator)
        raise
    return report


def _refused(operator: str) -> None:
    context = SecurityContext(
        actor_type=ActorType.OPERATOR,
        actor_id=operator,
        actor_label=operator,
        credential_kind=CredentialKind.OPERATOR,
    )
    record_security_event(OPERATION, Outcome.REJECTED, context, error_code="validation_error")


TABLES: tuple[type[models.Model], ...] = (
    Project,
    ProjectRepository,
    Membership,
    Memory,
    Task,
    TaskDependency,
    WorkReceipt,
    StateVersion,
)


@contextlib.contextmanager
def times_as_given() -> Iterator[None]:
    """created_at/updated_at are auto_now(_add): the import keeps the bundle's times instead.
    The flags are switched off for the length of one import, in the command's own process."""
    switched: list[tuple[models.DateTimeField, bool, bool]] = []
    for model in TABLES:
        for each in model._meta.concrete_fields:
            if isinstance(each, models.DateTimeField) and (each.auto_now or each.auto_now_add):
                switched.append((each, each.auto_now, each.auto_now_add))
                each.auto_now = each.auto_now_add = False
    try:
        yield
    finally:
        for each, now, now_add in switched:
            each.auto_now, each.auto_now_add = now, now_add


class _Loader:
    def __init__(
        self, report: ImportReport, *, slug: str | None, owner: str | None, operator: str
    ) -> None:
        self.report = report
        self.slug = slug
        self.owner = owner
        self.operator = operator
        self.project: Project | None = None
        self.pending: dict[type[models.Model], list[models.Model]] = {}
        self.chain = ""
        self.last_seq = 0
        self.last_hash = ""
        self.users: list[AbstractBaseUser] = []
        self.linked = connection.vendor == "postgresql"

    def run(self, reader: Reader) -> None:
        header = reader.read_header()
        self.chain = audit_chain.chain_of(header.get("project", {}).get("id"))
        handlers = self._handlers()
        with times_as_given():
            for line in reader.records():
                kind = line.record.pop("record", None)
                handler = handlers.get(str(kind))
                if handler is None:
                    raise BundleError(f"unknown record type {kind!r}", line=line.number)
                if kind != "project" and self.project is None:
                    raise BundleError("a record before the project's", line=line.number)
                try:
                    handler(line.record)
                except (KeyError, TypeError, ValueError) as error:
                    raise BundleError(
                        f"a {kind} record that cannot be read: {error!r}", line=line.number
                    ) from None
                self.report.counts[str(kind)] = self.report.counts.get(str(kind), 0) + 1
            self._flush_all()
        self.report.digest = reader.digest
        self._finish(header)

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], None]]:
        return {
            "project": self._project,
            "repository": self._repository,
            "membership": self._membership,
            "memory": self._memory,
            "task": self._task,
            "task_dependency": self._dependency,
            "receipt": self._receipt,
            "state_version": self._state_version,
            AUDIT_EVENT: self._audit_event,
        }

    # --- records ---------------------------------------------------------------------------

    def _project(self, record: dict[str, Any]) -> None:
        if self.project is not None:
            raise ValueError("a second project record")
        slug = self.slug or record["slug"]
        clash = Project.objects.filter(models.Q(pk=record["id"]) | models.Q(slug=slug)).first()
        if clash is not None:
            raise BundleError(
                f"this instance already holds project {clash.slug} ({clash.pk}): a bundle is "
                "imported once, into an instance that does not hold its project (ids are "
                "kept); nothing was imported"
            )
        if AuditChainHead.objects.filter(chain=self.chain).exists():
            raise BundleError(
                f"this instance already holds the audit chain of project {record['id']} (it "
                "was here before): ids are kept, so it cannot be imported again here"
            )
        self.project = Project.objects.create(
            id=uuid.UUID(record["id"]),
            slug=slug,
            name=record["name"],
            lease_seconds=record["lease_seconds"],
            created_at=_time(record["created_at"]),
            updated_at=_time(record["updated_at"]),
        )
        self.report.project_id, self.report.slug = str(self.project.pk), slug

    def _repository(self, record: dict[str, Any]) -> None:
        repository = Repository.objects.filter(
            provider=record["provider"],
            owner__iexact=record["owner"],
            name__iexact=record["name"],
        ).first()
        if repository is None:
            repository = Repository.objects.create(
                id=record["repository_id"],
                provider=record["provider"],
                owner=record["owner"],
                name=record["name"],
                url=record["url"],
                default_branch=record["default_branch"],
            )
        self._add(
            ProjectRepository(
                id=record["id"],
                project=self.project,
                repository=repository,
                commit_url_template=record["commit_url_template"],
                branch_url_template=record["branch_url_template"],
                created_at=_time(record["created_at"]),
            )
        )

    def _membership(self, record: dict[str, Any]) -> None:
        user = _user_for(record["username"], record["email"])
        who = f"{record['username']} <{record['email']}> ({record['role']})"
        if user is None:
            self.report.left_out.append(who)
            return
        role = Role(record["role"])
        if self.owner is not None and user.get_username() == self.owner:
            role = Role.OWNER
        self.report.members.append(f"{user.get_username()} ({role})")
        self.users.append(user)
        self._add(
            Membership(
                id=record["id"],
                project=self.project,
                user=cast(Any, user),
                role=role,
                created_at=_time(record["created_at"]),
                updated_at=_time(record["updated_at"]),
            )
        )

    def _memory(self, record: dict[str, Any]) -> None:
        self._add(
            Memory(
                project=self.project,
                **_fields(
                    record, "id", "kind", "title", "content", "rationale", "source", "author"
                ),
                supersedes_id=record["supersedes"],
                created_at=_time(record["created_at"]),
            )
        )

    def _task(self, record: dict[str, Any]) -> None:
        self._add(
            Task(
                project=self.project,
                **_fields(
                    record,
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
                ),
                **_lease_columns(record["lease"]),
                created_at=_time(record["created_at"]),
                updated_at=_time(record["updated_at"]),
            )
        )

    def _dependency(self, record: dict[str, Any]) -> None:
        self._add(
            TaskDependency(
                id=record["id"],
                project=self.project,
                task_id=record["task"],
                blocked_by_id=record["blocked_by"],
                created_at=_time(record["created_at"]),
            )
        )

    def _receipt(self, record: dict[str, Any]) -> None:
        self._add(
            WorkReceipt(
                project=self.project,
                task_id=record["task"],
                **_fields(
                    record,
                    "id",
                    "session_ref",
                    "summary",
                    "tests",
                    "commits",
                    "next_step",
                    "blockers",
                    "task_version",
                    "author",
                ),
                created_at=_time(record["created_at"]),
            )
        )

    def _state_version(self, record: dict[str, Any]) -> None:
        self._add(
            StateVersion(
                project=self.project,
                **_fields(record, "id", "agent", "version", "body", "author"),
                created_at=_time(record["created_at"]),
            )
        )

    def _audit_event(self, record: dict[str, Any]) -> None:
        """Checked against its own chain as it comes: the trigger will link it exactly so."""
        seq = int(record["seq"])
        if record["chain"] != self.chain or record["chain"] != audit_chain.chain_of(
            record["project_id"]
        ):
            raise ValueError("an audit event of another chain")
        if seq != self.last_seq + 1 or record["prev_hash"] != self.last_hash:
            raise ValueError(f"audit event {seq} does not follow event {self.last_seq}")
        fields = {name: record[name] for name in audit_chain.FIELDS}
        if (
            audit_chain.digest_canonical(fields) != record["digest"]
            or audit_chain.chain_hash(record["prev_hash"], seq, record["digest"]) != record["hash"]
        ):
            raise ValueError(f"audit event {seq}: its hashes do not match its fields")
        self.last_seq, self.last_hash = seq, record["hash"]
        fields["occurred_at"] = audit_chain.decode_time(fields["occurred_at"])
        event = AuditEvent(**fields, digest=record["digest"])
        if self.linked:
            # PostgreSQL takes them linked (audit.triggers: an archived chain); SQLite's
            # trigger links each row again itself, to the same hashes.
            event.seq, event.prev_hash, event.hash = seq, record["prev_hash"], record["hash"]
        self._add(event)

    # --- writing -----------------------------------------------------------------------------

    def _add(self, row: models.Model) -> None:
        rows = self.pending.setdefault(type(row), [])
        rows.append(row)
        if len(rows) >= BATCH:
            self._flush(type(row))

    def _flush(self, model: type[models.Model]) -> None:
        rows = self.pending.pop(model, [])
        if not rows:
            return
        if connection.vendor == "postgresql":
            copy_rows(model, rows)
        else:
            model._default_manager.bulk_create(rows)

    def _flush_all(self) -> None:
        for model in list(self.pending):
            self._flush(model)

    def _finish(self, header: dict[str, Any]) -> None:
        project = self.project
        if project is None:
            raise BundleError("the bundle holds no project record")
        expected = {name: int(n) for name, n in header.get("counts", {}).items()}
        got = {name: self.report.counts.get(name, 0) for name in NAMES}
        if {name: expected.get(name, 0) for name in NAMES} != got:
            raise BundleError(f"the header counts {expected}; the bundle holds {got}")
        _check_one_project(project)
        # Foreign keys are checked at COMMIT; a dry run never gets there, so check them now.
        connection.check_constraints(table_names=[model._meta.db_table for model in TABLES])
        if self.linked:
            with connection.cursor() as cursor:
                cursor.execute("SELECT audit_chain_adopt(%s)", [self.chain])
        head = AuditChainHead.objects.filter(chain=self.chain).values_list("seq", "last_hash")
        if self.last_seq and head.first() != (self.last_seq, self.last_hash):
            raise BundleError("the audit chain did not link again as the bundle has it")
        self._owners(project)
        for user in self.users:
            sync_object_permissions(project, user)
        caller = operator_caller(project, label=self.operator)
        record(
            caller, OPERATION, Outcome.SUCCESS, target_type="bundle", target_id=self.report.digest
        )

    def _owners(self, project: Project) -> None:
        if self.owner is not None and self.owner not in {u.get_username() for u in self.users}:
            user = get_user_model()._default_manager.filter(username=self.owner).first()
            if user is None:
                raise BundleError(f"--owner {self.owner}: no such user here")
            Membership.objects.create(project=project, user=user, role=Role.OWNER)
            self.users.append(user)
            self.report.members.append(f"{self.owner} ({Role.OWNER}, --owner)")
        if not Membership.objects.filter(project=project, role=Role.OWNER).exists():
            raise BundleError(
                "none of the bundle's owners is a user here: name one with --owner USERNAME"
            )


def _time(text: str) -> dt.datetime:
    value = decode_time(text)
    if value is None:
        raise ValueError("a time is missing")
    return value


def _fields(record: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: record[name] for name in names}


def _user_for(username: str, email: str) -> AbstractBaseUser | None:
    users = get_user_model()._default_manager
    user = users.filter(username=username).first()
    if user is None and email:
        by_email = list(users.filter(email__iexact=email)[:2])
        user = by_email[0] if len(by_email) == 1 else None
    return user


def _check_one_project(project: Project) -> None:
    """Every reference stays inside the project: a bundle may name another project's rows."""
    strays = (
        Memory.objects.filter(project=project, supersedes__isnull=False).exclude(
            supersedes__project=project
        ),
        TaskDependency.objects.filter(project=project).exclude(blocked_by__project=project),
        TaskDependency.objects.filter(project=project).exclude(task__project=project),
        WorkReceipt.objects.filter(project=project).exclude(task__project=project),
    )
    for rows in strays:
        if rows.exists():
            raise BundleError("a record points to a record of another project")


def _lease_columns(lease: dict[str, Any] | None) -> dict[str, Any]:
    """A task record's lease back into its columns (the lease is kept as of the export: an
    expired one is claimable on arrival, by the server's clock)."""
    if lease is None:
        return {}
    return {
        "lease_actor": lease["holder"]["actor"],
        "lease_session_ref": lease["holder"]["session_ref"],
        "lease_seconds": lease["seconds"],
        "lease_expires_at": _time(lease["expires_at"]),
    }
