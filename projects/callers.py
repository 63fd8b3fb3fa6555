"""Callers for people and operators; OAuth and API-key callers are built in identity.authn."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from core.access import (
    ALL_SCOPES,
    Actor,
    ActorType,
    Caller,
    Capability,
    Credential,
    CredentialKind,
    Role,
)
from projects.models import Project
from projects.roles import member_role


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
    member = member_role(project_id=project.pk, user_id=user.pk)
    if member is None and not getattr(user, "is_superuser", False):
        return None
    role = member if member is not None else Role.OWNER
    return person_caller(user, project, role=role, request_id=request_id)


def person_caller(
    user: AbstractBaseUser,
    project: Project,
    *,
    role: Role | None,
    request_id: str = "",
    grants: frozenset[Capability] = frozenset(),
) -> Caller:
    """A signed-in person's Caller, once their role (or grant) in `project` is decided."""
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
        grants=grants,
    )
