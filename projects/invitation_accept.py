"""The invited person's side of projects.invitations: opening the link, and accepting it as a
signed-in person or as a new account (a username and a password checked by Django's
validators). Accepting is one durable transaction with its audit rows; each refusal is audited
in the invitation's project with its reason (invitation_expired, invitation_used,
invitation_revoked, invitation_inviter...)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.models import Outcome
from audit.recorder import SecurityContext, record_security_event
from core.access import CredentialKind, Role, roles_grantable_by
from core.errors import HeyAiraError, ValidationError
from projects.invitations import REFUSALS, InvitationUnusable, token_digest, unusable_reason
from projects.models import Invitation, Membership, Project
from projects.permissions import sync_object_permissions
from projects.roles import member_role


@dataclass(frozen=True)
class NewAccount:
    username: str
    password: str


def invitation_open(token: str, *, person: Any = None, request_id: str = "") -> Invitation:
    """The invitation behind a link, if it can still be accepted; else InvitationUnusable (a
    known invitation's refusal is audited in its project; an unknown token has no project to
    audit in, and the caller counts it)."""
    invitation = (
        Invitation.objects.select_related("project").filter(token_hash=token_digest(token)).first()
    )
    return _usable(invitation, person, request_id)


def invitation_held(
    invitation_id: uuid.UUID, token_hash: str, *, person: Any = None, request_id: str = ""
) -> Invitation:
    """The invitation a browser opened the link of (kept in its session), if it can still be
    accepted; else InvitationUnusable, audited like a refusal of the link itself."""
    invitation = (
        Invitation.objects.select_related("project", "invited_by")
        .filter(pk=invitation_id, token_hash=token_hash)
        .first()
    )
    return _usable(invitation, person, request_id)


def invitation_accept(
    *,
    invitation_id: uuid.UUID,
    token_hash: str,
    person: Any = None,
    account: NewAccount | None = None,
    request_id: str = "",
) -> Membership:
    """Join the project: as `person` (signed in), or as a new account made from `account`,
    with the invitation's email. One durable transaction; the audit rows are in it, a refusal's
    after its rollback."""
    invitation = Invitation.objects.select_related("project").filter(pk=invitation_id).first()
    if invitation is None or invitation.token_hash != token_hash:
        raise InvitationUnusable("unknown")
    try:
        with transaction.atomic(durable=True):
            return _accept(invitation, person, account, request_id)
    except InvitationUnusable as error:
        _refused(invitation, error.reason, person, request_id)
        raise
    except HeyAiraError as error:
        _refused(invitation, error.code, person, request_id)
        raise


def _accept(
    invitation: Invitation, person: Any, account: NewAccount | None, request_id: str
) -> Membership:
    project = invitation.project
    # Serialize with the project's other membership changes (the last-owner rule's lock).
    Project.objects.select_for_update().filter(pk=project.pk).first()
    now = timezone.now()
    invitation.refresh_from_db()
    _refuse_unless_acceptable(invitation, person, now)
    user = person if person is not None else _new_account(account, invitation.email)
    # compare-and-set: the link works once, whoever comes second
    claimed = Invitation.objects.filter(
        pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
    ).update(accepted_at=now, accepted_by=user)
    if not claimed:
        raise InvitationUnusable("used", invitation)
    membership = Membership.objects.create(project=project, user=user, role=invitation.role)
    sync_object_permissions(project, user)
    context = _context(user, request_id)
    for operation_name, target_type, target_id in (
        ("invitation_accept", "invitation", invitation.pk),
        ("membership_add", "membership", membership.pk),
    ):
        record_security_event(
            operation_name,
            Outcome.SUCCESS,
            context,
            project=project,
            target_type=target_type,
            target_id=str(target_id),
        )
    return membership


def _refuse_unless_acceptable(invitation: Invitation, person: Any, now: Any) -> None:
    """Checked again under the project's lock: the link still works, its inviter may still
    grant the role, and the person signed in (if any) is not a member already."""
    reason = unusable_reason(invitation, now)
    if reason is not None:
        raise InvitationUnusable(reason, invitation)
    if not _inviter_may_grant(invitation):
        raise InvitationUnusable("inviter", invitation)
    if person is not None:
        project = invitation.project
        role = member_role(project_id=project.pk, user_id=person.pk, active_only=False)
        if role is not None:
            raise ValidationError(
                f"You are a member of {project.name} already, as {Role(role).label.lower()}.",
                fields={"invitation": "you are a member already"},
            )


def _inviter_may_grant(invitation: Invitation) -> bool:
    """The inviter's authority is checked again: an admin demoted since, or an account gone,
    leaves invitations that can no longer be accepted."""
    inviter = invitation.invited_by
    if inviter is None or not inviter.is_active:
        return False
    if getattr(inviter, "is_superuser", False):
        return True
    role = member_role(project_id=invitation.project_id, user_id=inviter.pk)
    return role is not None and Role(invitation.role) in roles_grantable_by(role)


def _new_account(account: NewAccount | None, email: str) -> Any:
    if account is None:
        raise ValidationError(fields={"username": "is required", "password": "is required"})
    users = get_user_model()
    username = account.username.strip()
    problems: dict[str, str] = {}
    try:
        users.username_validator(username)
        if not username or len(username) > 150:
            raise DjangoValidationError("must be 1 to 150 characters")
    except DjangoValidationError as error:
        problems["username"] = " ".join(error.messages)
    else:
        if users.objects.filter(username__iexact=username).exists():
            problems["username"] = "is taken; choose another"
    try:
        validate_password(account.password, user=users(username=username, email=email))
    except DjangoValidationError as error:
        problems["password"] = " ".join(error.messages)
    if problems:
        raise ValidationError("Choose another username or password.", fields=problems)
    try:
        with transaction.atomic():
            return users.objects.create_user(
                username=username, email=email, password=account.password
            )
    except IntegrityError:
        raise ValidationError(
            "Choose another username or password.", fields={"username": "is taken"}
        ) from None


def _usable(invitation: Invitation | None, person: Any, request_id: str) -> Invitation:
    """`invitation` if it can still be accepted; else InvitationUnusable (a known invitation's
    refusal audited in its project)."""
    if invitation is None:
        raise InvitationUnusable("unknown")
    reason = unusable_reason(invitation)
    if reason is not None:
        _refused(invitation, reason, person, request_id)
        raise InvitationUnusable(reason, invitation)
    return invitation


def _context(person: Any, request_id: str) -> SecurityContext:
    if person is None:
        return SecurityContext(
            request_id=request_id,
            instance=settings.HEYAIRA_INSTANCE,
            credential_kind=CredentialKind.SESSION,
        )
    return SecurityContext.of_session(
        person, request_id=request_id, instance=settings.HEYAIRA_INSTANCE
    )


def _refused(invitation: Invitation, reason: str, person: Any, request_id: str) -> None:
    """A refusal, audited in the invitation's project after any rollback."""
    record_security_event(
        "invitation_accept",
        Outcome.REJECTED,
        _context(person, request_id),
        project=invitation.project,
        target_type="invitation",
        target_id=str(invitation.pk),
        error_code=f"invitation_{reason}" if reason in REFUSALS else reason,
    )
