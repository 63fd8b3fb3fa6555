"""A checked bundle put into the database: all or nothing, in one transaction.

Ids, versions, times, supersession and dependencies are kept as the bundle has them. So a bundle
goes into another instance (or into this one after the project and its audit chain are gone),
never twice into one: a project id, slug or audit chain already here is refused before anything
is written, and so is a record whose id another project holds (docs/bundle.md).

The audit events are inserted in chain order with their own fields and digests; the database's
trigger links them again, and since a link depends only on the fields, the position and the link
before it, they get the very hashes they had: the source's chains, and their checkpoints, verify
here. They stay archived, as they are: the project's new events go to a new chain (the
generation after the bundle's last, audit.chain.chain_of), which the import starts with an event
naming the bundle's digest.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, models, transaction

from audit import chain as audit_chain
from audit.models import AuditChainHead, AuditEvent, Outcome
from audit.recorder import (
    AuditNote,
    SecurityContext,
    record,
    record_after_failure,
    record_security_event,
)
from continuity.bundle.copy import copy_rows
from continuity.bundle.format import BundleError, Reader, decode_time
from continuity.bundle.records import AUDIT_EVENT, NAMES
from continuity.models import Memory, StateVersion, Task, TaskDependency, WorkReceipt
from core.access import ActorType, Caller, CredentialKind, Role
from core.errors import ProjectNotEmpty, ValidationError
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
    not_added: list[str] = field(default_factory=list)  # memberships an import over REST skips
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
    caller: Caller | None = None,
) -> ImportReport:
    """Import a bundle; raises BundleError or ProjectNotEmpty (audited) and leaves nothing when
    it is refused. With `caller` (POST /api/v1/import) the records go into the caller's own
    project, which must hold none yet, and the import is the caller's; else into a new project
    with the bundle's id (project_import, as `operator`)."""
    report = ImportReport(dry_run=dry_run)
    try:
        with transaction.atomic(durable=True):
            loader = _Loader(report, slug=slug, owner=owner, operator=operator, caller=caller)
            loader.run(Reader(lines))
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    except IntegrityError as error:
        _refused(operator, caller, ValidationError.code)
        raise BundleError(
            "a record's id is already used in this instance, or points to a record the bundle "
            f"lacks; nothing was imported ({str(error).splitlines()[0][:200]})"
        ) from None
    except BundleError:
        _refused(operator, caller, ValidationError.code)
        raise
    except ProjectNotEmpty:
        _refused(operator, caller, ProjectNotEmpty.code)
        raise
    return report


def _refused(operator: str, caller: Caller | None, code: str) -> None:
    if caller is not None:  # in the project's own chain, after the rollback
        record_after_failure(caller, OPERATION, AuditNote(), code)
        return
    context = SecurityContext(
        actor_type=ActorType.OPERATOR,
        actor_id=operator,
        actor_label=operator,
        credential_kind=CredentialKind.OPERATOR,
    )
    record_security_event(OPERATION, Outcome.REJECTED, context, error_code=code)


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


_as_given = threading.local()
_switch_lock = threading.Lock()
_switched: list[models.DateTimeField] = []


@contextlib.contextmanager
def times_as_given() -> Iterator[None]:
    """created_at/updated_at are auto_now(_add): the import keeps the bundle's times instead,
    in this thread only (a server's other requests, in other threads, keep theirs): each such
    field's pre_save gives the time the row holds while the switch is on in its thread."""
    _install_time_switch()
    _as_given.on = True
    try:
        yield
    finally:
        _as_given.on = False


def _install_time_switch() -> None:
    with _switch_lock:
        if _switched:
            return
        for model in TABLES:
            for each in model._meta.concrete_fields:
                if isinstance(each, models.DateTimeField) and (each.auto_now or each.auto_now_add):
                    each.pre_save = _given_or(each, each.pre_save)  # type: ignore[method-assign,assignment]
                    _switched.append(each)


def _given_or(
    each: models.DateTimeField, pre_save: Callable[[models.Model, bool], Any]
) -> Callable[[models.Model, bool], Any]:
    def given(instance: models.Model, add: bool) -> Any:
        value = getattr(instance, each.attname)
        if getattr(_as_given, "on", False) and value is not None:
            return value
        return pre_save(instance, add)

    return given


class _Loader:
    def __init__(
        self,
        report: ImportReport,
        *,
        slug: str | None,
        owner: str | None,
        operator: str,
        caller: Caller | None,
    ) -> None:
        self.report = report
        self.caller = caller
        self.slug = slug
        self.owner = owner
        self.operator = operator
        self.project: Project | None = None
        self.pending: dict[type[models.Model], list[models.Model]] = {}
        self.project_key = ""  # the project's id as the header names it
        # The bundle's audit chains as they come: name -> (last position, last hash).
        self.chains: dict[str, tuple[int, str]] = {}
        # The project whose chains come first: the bundle's own, or the one whose chains it
        # holds archived (a project that was imported into another, over REST).
        self.archive_key = ""
        self.chain = ""
        self.order: tuple[int, int] = (0, 0)  # (which project's chains, generation)
        self.own_generation = 0  # the last generation of the bundle's project's own chains
        self.last_seq = 0
        self.last_hash = ""
        self.users: list[AbstractBaseUser] = []
        self.linked = connection.vendor == "postgresql"

    def run(self, reader: Reader) -> None:
        header = reader.read_header()
        self.project_key = audit_chain.chain_of(header.get("project", {}).get("id"))
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
        if self.caller is not None:
            self._into(self.caller.project, record)
            return
        slug = self.slug or record["slug"]
        clash = Project.objects.filter(models.Q(pk=record["id"]) | models.Q(slug=slug)).first()
        if clash is not None:
            raise BundleError(
                f"this instance already holds project {clash.slug} ({clash.pk}): a bundle is "
                "imported once, into an instance that does not hold its project (ids are "
                "kept); nothing was imported"
            )
        first = audit_chain.chain_of(record["id"])
        chains = AuditChainHead.objects.filter(
            models.Q(chain=first) | models.Q(chain__startswith=f"{first}.")
        )
        if first != self.project_key:
            raise ValueError("the project record is not the project the header names")
        if chains.exists():
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

    def _into(self, project: Project, record: dict[str, Any]) -> None:
        """The caller's own project takes the records: it keeps its id, slug, name and live
        audit chain, and must hold none of the records a bundle brings yet."""
        project = Project.objects.select_for_update().get(pk=project.pk)
        if audit_chain.chain_of(record["id"]) != self.project_key:
            raise ValueError("the project record is not the project the header names")
        held = [model._meta.verbose_name_plural for model in HELD if _holds(model, project)]
        if held:
            raise ProjectNotEmpty(
                f"Project {project.slug} holds {', '.join(map(str, held))} already: a bundle is "
                "imported into a project that holds no records yet (make a new project, and a "
                "key for it, to import into); nothing was imported.",
                holds=[str(each) for each in held],
            )
        if project.audit_archive:
            raise ProjectNotEmpty(
                f"Project {project.slug} holds another bundle's audit chains already.",
                holds=["audit chains"],
            )
        self.project = project
        self.report.project_id, self.report.slug = str(project.pk), project.slug

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
        who = f"{record['username']} <{record['email']}> ({record['role']})"
        if self.caller is not None:
            # Over REST no one is made a member, and no user is looked up: membership is
            # administration, for people signed in (the admin) or operators, and the answer
            # would tell a key's holder which users this instance has.
            self.report.not_added.append(who)
            return
        user = _user_for(record["username"], record["email"])
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
        if record["chain"] != self.chain:
            self._next_chain(record)
        if seq != self.last_seq + 1 or record["prev_hash"] != self.last_hash:
            raise ValueError(f"audit event {seq} does not follow event {self.last_seq}")
        fields = {name: record[name] for name in audit_chain.FIELDS}
        if (
            audit_chain.digest_canonical(fields) != record["digest"]
            or audit_chain.chain_hash(record["prev_hash"], seq, record["digest"]) != record["hash"]
        ):
            raise ValueError(f"audit event {seq}: its hashes do not match its fields")
        self.last_seq, self.last_hash = seq, record["hash"]
        self.chains[self.chain] = (seq, self.last_hash)
        fields["occurred_at"] = audit_chain.decode_time(fields["occurred_at"])
        event = AuditEvent(**fields, digest=record["digest"])
        if self.linked:
            # PostgreSQL takes them linked (audit.triggers: an archived chain); SQLite's
            # trigger links each row again itself, to the same hashes.
            event.seq, event.prev_hash, event.hash = seq, record["prev_hash"], record["hash"]
        self._add(event)

    def _next_chain(self, record: dict[str, Any]) -> None:
        """A new chain starts: the project's chains come in order, archived ones first (those
        of the project it was imported into, if it was, then its own, by generation)."""
        name = str(record["chain"])
        generation = audit_chain.generation_of(name, record["project_id"])
        key = audit_chain.chain_of(record["project_id"])
        if not self.archive_key:
            self.archive_key = key
        if generation is None or key not in (self.archive_key, self.project_key):
            raise ValueError("an audit event of another project's chain")
        order = (0 if key == self.archive_key else 1, generation)
        if order <= self.order:
            raise ValueError(f"audit chain {name} out of order")
        if AuditChainHead.objects.filter(chain=name).exists():
            raise BundleError(
                f"this instance already holds audit chain {name}: nothing was imported"
            )
        self.chain, self.order, self.last_seq, self.last_hash = name, order, 0, ""
        if key == self.project_key:
            self.own_generation = generation

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
        self._archive_chains(project)
        self._owners(project)
        for user in self.users:
            sync_object_permissions(project, user)
        caller = self.caller or operator_caller(project, label=self.operator)
        record(
            caller, OPERATION, Outcome.SUCCESS, target_type="bundle", target_id=self.report.digest
        )

    def _archive_chains(self, project: Project) -> None:
        """The bundle's chains, linked again here with the very hashes they had, stay as they
        are; the project's new events go to the next generation's chain, which the import
        event (below) starts."""
        for name, last in self.chains.items():
            if self.linked:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT audit_chain_adopt(%s)", [name])
            head = AuditChainHead.objects.filter(chain=name).values_list("seq", "last_hash")
            if head.first() != last:
                raise BundleError(f"audit chain {name} did not link again as the bundle has it")
        archive = "" if self.archive_key == self.project_key else self.archive_key
        if self.caller is not None:
            if self.chains and self.archive_key != self.project_key:
                raise BundleError(
                    "the bundle holds the audit chains of two projects (it was imported into "
                    "another once already): import it with project_import instead"
                )
            # The project's own live chain goes on; the bundle's project's chains are archived.
            archive = self.project_key if self.chains else ""
            Project.objects.filter(pk=project.pk).update(audit_archive=archive)
            project.audit_archive = archive
            return
        live = audit_chain.chain_of(project.pk, self.own_generation + 1)
        # update(): the project's updated_at stays the bundle's.
        Project.objects.filter(pk=project.pk).update(audit_chain=live, audit_archive=archive)
        project.audit_chain, project.audit_archive = live, archive

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


# What a project imported into must not hold yet (its memberships it may).
HELD: tuple[type[models.Model], ...] = (
    ProjectRepository,
    Memory,
    Task,
    TaskDependency,
    WorkReceipt,
    StateVersion,
)


def _holds(model: type[models.Model], project: Project) -> bool:
    return bool(model._default_manager.filter(project=project).exists())


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
