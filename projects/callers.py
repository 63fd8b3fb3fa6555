"""Callers for people and operators; OAuth and API-key callers are built in heyaira.auth."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from projects.access import (
    ALL_SCOPES,
    Actor,
    ActorType,
    Caller,
    Credential,
    CredentialKind,
    Role,
)
from projects.models import Membership, Project


def new_request_id() -> str:
    return uuid.uuid4().hex


def operator_caller(project: Project, *, label: str = "manage.py", request_id: str = "") -> Caller:
    """Someone with shell access to the server: an owner of every project by definition."""
    return Caller(
        project=project,
        role=Role.OWNER,
        scopes=frozenset(ALL_SCOPES),
        actor=Actor(type=ActorType.OPERATOR, id=label, label=label),
        user_id=None,
        credential=Credential(kind=CredentialKind.OPERATOR),
        resource="",
        instance=settings.HEYAIRA_INSTANCE,
        request_id=request_id or new_request_id(),
    )


def session_caller(
    user: AbstractBaseUser | AnonymousUser, project: Project, *, request_id: str = ""
) -> Caller | None:
    """A signed-in person acting on one project (admin, web UI); None if they have no role.

    Superusers act as owners of every project.
    """
    if not user.is_authenticated or not user.is_active:
        return None
    role_name = (
        Membership.objects.filter(project=project, user_id=user.pk)
        .values_list("role", flat=True)
        .first()
    )
    if role_name is None and not getattr(user, "is_superuser", False):
        return None
    role = Role(role_name) if role_name is not None else Role.OWNER
    return Caller(
        project=project,
        role=role,
        scopes=frozenset(ALL_SCOPES),
        actor=Actor(type=ActorType.USER, id=str(user.pk), label=user.get_username()),
        user_id=int(user.pk),
        credential=Credential(kind=CredentialKind.SESSION),
        resource="",
        instance=settings.HEYAIRA_INSTANCE,
        request_id=request_id or new_request_id(),
    )
