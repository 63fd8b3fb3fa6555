"""Which project a page is about, decided from the signed-in person's own grants.

A slug in a URL is never trusted alone: it is looked up among the person's memberships (the
dashboard, API keys) or among the projects whose audit log they may read (the audit pages). An
unknown slug and a project that is not theirs get the same answer, Http404, so existence never
leaks (docs/security.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import Http404, HttpRequest

from audit.recorder import SecurityContext
from core.access import ActorType, Caller, Capability, CredentialKind
from projects.admin_audit import audit_readable_projects
from projects.callers import session_caller
from projects.models import Membership, Project


def request_id(request: HttpRequest) -> str:
    return str(getattr(request, "request_id", ""))


def signed_in(request: HttpRequest) -> AbstractBaseUser:
    """The signed-in person (the pages' login_required sent everyone else to sign in)."""
    user = request.user
    if not user.is_authenticated:
        raise Http404
    return user


def member_caller(request: HttpRequest, slug: str) -> Caller:
    """The person as a member of the project `slug`, or Http404."""
    membership = (
        Membership.objects.select_related("project")
        .filter(user_id=signed_in(request).pk, user__is_active=True, project__slug=slug)
        .first()
    )
    if membership is None:
        raise Http404
    caller = session_caller(request.user, membership.project, request_id=request_id(request))
    if caller is None:  # the membership ended between the two reads
        raise Http404
    return caller


def manager_caller(request: HttpRequest, slug: str) -> Caller:
    """A member who may manage the project (owners and admins), or Http404: the pages for
    managing a project do not exist for anyone else."""
    caller = member_caller(request, slug)
    if not caller.can(Capability.MANAGE):
        raise Http404
    return caller


@dataclass(frozen=True)
class AuditReader:
    """A person reading one project's audit log: an owner, an admin, or an auditor (a
    django-guardian grant of projects.view_project_audit, who need not be a member)."""

    project: Project
    context: SecurityContext


def audit_reader(request: HttpRequest, slug: str) -> AuditReader:
    """The person as a reader of the audit log of `slug`, or Http404."""
    project = audit_readable_projects(request.user).filter(slug=slug).first()
    if project is None:
        raise Http404
    user = signed_in(request)
    context = SecurityContext(
        actor_type=ActorType.USER,
        actor_id=str(user.pk),
        actor_label=user.get_username(),
        user_id=int(user.pk),
        request_id=request_id(request),
        instance=settings.HEYAIRA_INSTANCE,
        credential_kind=CredentialKind.SESSION,
    )
    return AuditReader(project=project, context=context)
