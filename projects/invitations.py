"""Invitations: owners and admins invite people by email to join their project with a role.

- Creating one is an operation of the inviter (capability MANAGE, and only the roles they may
  grant: an admin gives viewer or contributor, an owner any role). It returns the link's token
  once; only its SHA-256 is stored.
- The link works once, until it expires (HEYAIRA_INVITATION_TTL_HOURS), unless an owner or
  admin revokes it first. Accepting it is a compare-and-set on accepted_at, so two browsers
  racing with one link make one membership.
- Whoever holds the link may accept it: a signed-in person as themselves, a new person by
  choosing a username and a password (Django's password validators). The invitation still
  needs its inviter to be able to grant its role when it is accepted (the accepting side is
  projects.invitation_accept).
- Every step is an audit event of the project: invitation_create, invitation_revoke and
  invitation_accept (with membership_add), and each refusal with its reason as error code
  (invitation_expired, invitation_used, invitation_revoked, invitation_inviter...).
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.utils import timezone
from pydantic import AfterValidator, Field

from audit.recorder import AuditNote
from core.access import Caller, Capability, Role, roles_grantable_by
from core.errors import Forbidden, NotFound, ValidationError
from core.lookups import project_object
from core.operations import operation
from core.validation import Input
from projects.inputs import RoleName
from projects.models import Invitation, Membership, Project

TOKEN_BYTES = 32  # 256 random bits: guessing one is hopeless, so a plain hash stores it safely
PENDING_SHOWN = 100


def _email(value: str) -> str:
    value = value.strip()
    try:
        validate_email(value)
    except DjangoValidationError:
        raise ValueError("is not an email address") from None
    return value


class InvitationCreateInput(Input):
    email: Annotated[str, Field(max_length=254), AfterValidator(_email)]
    role: RoleName


class InvitationIdInput(Input):
    invitation_id: uuid.UUID


class InvitationListInput(Input):
    pass


@dataclass(frozen=True)
class IssuedInvitation:
    invitation: Invitation
    token: str  # for the link, once: mailed and shown to the inviter, never stored or logged


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def pending(project: Project, now: datetime | None = None) -> Any:
    """The project's invitations that can still be accepted."""
    return Invitation.objects.filter(
        project=project,
        accepted_at__isnull=True,
        revoked_at__isnull=True,
        expires_at__gt=now or timezone.now(),
    )


# --- the inviter's side ---------------------------------------------------------------------


@operation("invitation_create", capability=Capability.MANAGE, input_model=InvitationCreateInput)
def invitation_create(
    caller: Caller, args: InvitationCreateInput, note: AuditNote
) -> IssuedInvitation:
    role = Role(args.role)
    if role not in roles_grantable_by(caller.role):
        raise Forbidden(
            f"As {caller.role_label.lower()} you can invite people as "
            f"{' or '.join(r.label.lower() for r in roles_grantable_by(caller.role))} only; "
            f"only an owner can invite an {role.label.lower()}."
        )
    # Serialize invitations per project: two owners inviting one address make one invitation.
    Project.objects.select_for_update().filter(pk=caller.project.pk).first()
    waiting = pending(caller.project).filter(email__iexact=args.email).first()
    if waiting is not None:
        until = waiting.expires_at.strftime("%Y-%m-%d %H:%M UTC")
        raise ValidationError(
            f"{args.email} has an invitation waiting already (until {until}); revoke it to "
            "send a new one.",
            fields={"email": "has an invitation waiting already"},
        )
    members = Membership.objects.filter(project=caller.project, user__email__iexact=args.email)
    if members.filter(user__is_active=True).exists():
        raise ValidationError(
            f"A member of {caller.project.name} already has the address {args.email}.",
            fields={"email": "belongs to a member already"},
        )
    token = secrets.token_urlsafe(TOKEN_BYTES)
    invitation = Invitation.objects.create(
        project=caller.project,
        email=args.email,
        role=role,
        token_hash=token_digest(token),
        invited_by_id=caller.user_id,
        invited_by_label=caller.actor.label[:150],
        expires_at=timezone.now() + timedelta(hours=settings.HEYAIRA_INVITATION_TTL_HOURS),
    )
    note.target("invitation", invitation.pk)
    return IssuedInvitation(invitation=invitation, token=token)


@operation("invitation_revoke", capability=Capability.MANAGE, input_model=InvitationIdInput)
def invitation_revoke(caller: Caller, args: InvitationIdInput, note: AuditNote) -> Invitation:
    """Withdraw an invitation that has not been accepted; its link stops working at once."""
    note.target("invitation", args.invitation_id)
    invitation = _invitation(caller, args.invitation_id)
    if Role(invitation.role) not in roles_grantable_by(caller.role):
        raise Forbidden("Only an owner can revoke an invitation to the admin or owner role.")
    # compare-and-set: an acceptance that won the race keeps its membership
    ended = Invitation.objects.filter(
        pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())
    if not ended:
        raise ValidationError(
            "This invitation was accepted or revoked already.",
            fields={"invitation_id": "is no longer pending"},
        )
    invitation.refresh_from_db(fields=["revoked_at"])
    return invitation


@operation(
    "invitation_list",
    capability=Capability.MANAGE,
    input_model=InvitationListInput,
    writes=False,
)
def invitation_list(caller: Caller, args: InvitationListInput, note: AuditNote) -> list[Invitation]:
    """The invitations still waiting to be accepted, newest first (bounded)."""
    note.target("project", caller.project.pk)
    return list(pending(caller.project).order_by("-created_at", "-pk")[:PENDING_SHOWN])


def invitation_get(caller: Caller, invitation_id: uuid.UUID) -> Invitation:
    """One of the caller's project's invitations (a read for the pages; the caller manages)."""
    caller.require(Capability.MANAGE)
    return _invitation(caller, invitation_id)


def _invitation(caller: Caller, invitation_id: uuid.UUID) -> Invitation:
    return project_object(
        Invitation.objects.select_related("project"),
        caller,
        invitation_id,
        missing="No such invitation in this project.",
    )


# --- why a link cannot be used ---------------------------------------------------------------


class InvitationUnusable(NotFound):
    """The link cannot be used; `reason` says why (and becomes the refusal's audit code)."""

    def __init__(self, reason: str, invitation: Invitation | None = None) -> None:
        super().__init__(REFUSALS[reason])
        self.reason = reason
        self.invitation = invitation


REFUSALS = {
    "unknown": "This invitation link is not valid. Open the whole link from the invitation, "
    "or ask for a new one.",
    "expired": "This invitation has expired. Ask the person who invited you for a new one.",
    "used": "This invitation has been used already: a link works once. If it was you, sign "
    "in to reach the project.",
    "revoked": "This invitation was withdrawn. Ask the project's owners for a new one if you "
    "still need one.",
    "inviter": "The person who sent this invitation can no longer give this role. Ask an "
    "owner of the project for a new invitation.",
}


def unusable_reason(invitation: Invitation, now: datetime | None = None) -> str | None:
    if invitation.revoked_at is not None:
        return "revoked"
    if invitation.accepted_at is not None:
        return "used"
    if invitation.expires_at <= (now or timezone.now()):
        return "expired"
    return None
