"""Personas and callers for tests, built through the services so audit rows exist."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from core.access import (
    ALL_SCOPES,
    Actor,
    ActorType,
    Caller,
    Credential,
    CredentialKind,
    Role,
)
from projects.callers import operator_caller
from projects.models import Membership, Project
from projects.services import membership_add, project_create, repository_bind

# In-process tests hash passwords with a fast hasher; live servers keep the real one.
FAST_PASSWORD_HASHERS = ("django.contrib.auth.hashers.MD5PasswordHasher",)


def make_user(username: str, **extra: Any) -> User:
    return get_user_model().objects.create_user(
        username=username, password=f"pw-{username}-Xy7!", **extra
    )


def make_project(slug: str, owner: User) -> Project:
    return project_create(
        slug=slug, name=slug.title(), owner_username=owner.username, operator="tests"
    )


def add_member(project: Project, user: User, role: Role) -> Membership:
    return membership_add(operator_caller(project), user_id=user.pk, role=role)


def bind_repository(project: Project, owner: str = "acme", name: str = "app") -> None:
    repository_bind(
        operator_caller(project),
        provider="github",
        owner=owner,
        name=name,
        url=f"https://github.com/{owner}/{name}",
    )


def token_caller(
    user: User,
    project: Project,
    *,
    scopes: frozenset[str] | set[str] | None = None,
    kind: CredentialKind = CredentialKind.OAUTH_TOKEN,
    resource: str | None = None,
) -> Caller:
    """A caller as the authentication component builds it for a delegated credential."""
    role = Membership.objects.get(project=project, user_id=user.pk).role
    return Caller(
        project=project,
        role=Role(role),
        scopes=frozenset(ALL_SCOPES if scopes is None else scopes),
        actor=Actor(type=ActorType.USER, id=str(user.pk), label=user.username),
        user_id=user.pk,
        credential=Credential(kind=kind, id=str(uuid.uuid4()), fingerprint="testfp"),
        resource=resource or settings.HEYAIRA_MCP_RESOURCE,
        instance=settings.HEYAIRA_INSTANCE,
        request_id=uuid.uuid4().hex,
        client_id="test-client",
    )


@dataclass
class World:
    """Two projects. alpha has one member per role; beta belongs to the outsider."""

    alpha: Project
    beta: Project
    owner: User
    admin: User
    contributor: User
    viewer: User
    outsider: User

    def caller(self, who: str, **kwargs: Any) -> Caller:
        user = getattr(self, who)
        project = self.beta if who == "outsider" else self.alpha
        return token_caller(user, project, **kwargs)


def build_world() -> World:
    owner = make_user("olivia")
    admin = make_user("adam")
    contributor = make_user("carla")
    viewer = make_user("victor")
    outsider = make_user("oscar")
    alpha = make_project("alpha", owner)
    add_member(alpha, admin, Role.ADMIN)
    add_member(alpha, contributor, Role.CONTRIBUTOR)
    add_member(alpha, viewer, Role.VIEWER)
    beta = make_project("beta", outsider)
    bind_repository(alpha)
    bind_repository(beta, "beta-co", "service")
    return World(alpha, beta, owner, admin, contributor, viewer, outsider)


def wc(caller: Caller) -> dict[str, str]:
    return caller.write_context.as_dict()
