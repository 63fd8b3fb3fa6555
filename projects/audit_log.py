"""Reading a project's audit log, and the one rule for who may: the people whose role holds
READ_AUDIT in core.access's capability table (owners and admins), the auditors an owner named
(projects.auditors), and superusers. The admin, the web pages and the operations all ask here.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from audit.filters import AuditEventFilter, filtered
from audit.models import AuditEvent
from audit.recorder import AuditNote
from audit.state import project_ids
from core.access import ROLE_CAPABILITIES, Caller, Capability
from core.operations import operation
from projects.callers import person_caller
from projects.inputs import AuditListInput
from projects.models import AuditorGrant, Membership, Project

# The roles whose members read their project's audit log, as the capability table says.
READER_ROLES = tuple(
    role for role, held in ROLE_CAPABILITIES.items() if Capability.READ_AUDIT in held
)


def readable_projects(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    """The projects whose audit log `user` may read (superusers: every project)."""
    if not user.is_authenticated or not user.is_active:
        return Project.objects.none()
    if getattr(user, "is_superuser", False):
        return Project.objects.all()
    by_role = Membership.objects.filter(user_id=user.pk, role__in=READER_ROLES)
    as_auditor = AuditorGrant.objects.filter(user_id=user.pk)
    return Project.objects.filter(
        Q(pk__in=by_role.values("project_id")) | Q(pk__in=as_auditor.values("content_object_id"))
    )


def may_read_audit(user: AbstractBaseUser | AnonymousUser, project_id: UUID | str) -> bool:
    return readable_projects(user).filter(pk=project_id).exists()


def audit_reader(user: AbstractBaseUser, slug: str, *, request_id: str = "") -> Caller | None:
    """The person as a reader of the audit log of the project `slug`, or None when the rule
    above does not let them read it. The Caller holds READ_AUDIT alone, whatever else their
    role allows: the audit pages read the log and nothing else."""
    project = readable_projects(user).filter(slug=slug).first()
    if project is None:
        return None
    return person_caller(
        user, project, role=None, request_id=request_id, grants=frozenset({Capability.READ_AUDIT})
    )


def event_json(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": str(event.pk),
        "occurred_at": event.occurred_at.isoformat(),
        "request_id": event.request_id,
        "actor": {"type": event.actor_type, "id": event.actor_id, "label": event.actor_label},
        "client_id": event.client_id,
        "credential": {"kind": event.credential_kind, "fingerprint": event.credential_fingerprint},
        "resource": event.resource,
        "instance": event.instance,
        "operation": event.operation,
        "target": {"type": event.target_type, "id": event.target_id},
        "outcome": event.outcome,
        "error_code": event.error_code,
    }


@operation("audit_list", capability=Capability.READ_AUDIT, input_model=AuditListInput, writes=False)
def audit_list(caller: Caller, args: AuditListInput, note: AuditNote) -> dict[str, Any]:
    """The newest audit events of the caller's project."""
    note.target("project", caller.project.pk)
    filters = AuditEventFilter(args.model_dump(include={"operation", "outcome"}, exclude_none=True))
    events = filtered(
        AuditEvent.objects.filter(project_id__in=project_ids(caller.project)), filters
    )
    return {"events": [event_json(e) for e in events[: args.limit]]}
