"""Auditors: people an owner allows to read one project's audit log without being members.

The grant is the django-guardian object permission projects.view_project_audit on the Project
(docs/architecture.md, "The tenancy rule"). Only owners give or take it; each grant, revocation and
refusal is an audit event of the project.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from guardian.shortcuts import assign_perm
from pydantic import StrictInt

from audit.recorder import AuditNote
from core.access import Caller, Capability
from core.errors import NotFound, ValidationError
from core.lookups import delete_found
from core.operations import operation
from core.validation import Input
from projects.models import AuditorGrant

AUDIT_PERMISSION = "view_project_audit"


class AuditorInput(Input):
    user_id: StrictInt


@operation("auditor_grant", capability=Capability.OWN, input_model=AuditorInput)
def auditor_grant(caller: Caller, args: AuditorInput, note: AuditNote) -> AuditorGrant:
    note.target("user", args.user_id)
    user = get_user_model().objects.filter(pk=args.user_id, is_active=True).first()
    if user is None:
        raise NotFound("No such active user.")
    grants = AuditorGrant.objects.filter(content_object=caller.project)
    if grants.filter(user=user).exists():
        raise ValidationError(
            "This person is already an auditor of this project.",
            fields={"user_id": "is already an auditor of this project"},
        )
    assign_perm(f"projects.{AUDIT_PERMISSION}", user, caller.project)
    return grants.get(user=user)


@operation("auditor_revoke", capability=Capability.OWN, input_model=AuditorInput)
def auditor_revoke(caller: Caller, args: AuditorInput, note: AuditNote) -> None:
    note.target("user", args.user_id)
    delete_found(
        AuditorGrant.objects.filter(content_object=caller.project, user_id=args.user_id),
        missing="This person is not an auditor of this project.",
    )
