"""Which project a page is about, decided from the signed-in person's own grants, and how a
page view is audited.

A slug in a URL is never trusted alone: it is looked up among the person's memberships (the
dashboard, API keys) or among the projects whose audit log they may read (the audit pages). An
unknown slug and a project that is not theirs get the same answer, Http404, so existence never
leaks (docs/security.md).

Page views are counted, not stored read by read: a page makes two or three audited reads, and a
row for each would bury the project's writes. A page that reads a project notes its view here
(`member_caller` does it, and `audit_page_view` for the audit pages); once the page is served,
`count_page_view` counts it per person, page and 10-minute window (audit.noise), and the first
of each such window is an audit event (`page_view`, or `audit_browse` / `audit_event_view` for
the audit log itself).
Refusals are recorded one by one as always, and exports each time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import Http404, HttpRequest, HttpResponseBase

from audit.models import Outcome
from audit.noise import count_event
from audit.recorder import SecurityContext, record_security_event
from core.access import Caller, Capability
from projects.audit_log import audit_reader
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
    if not _reading(request):
        return caller
    note_page_view(request, caller.project, PAGE_VIEW)
    return replace(caller, reads_counted=True)


def manager_caller(request: HttpRequest, slug: str) -> Caller:
    """A member who may manage the project (owners and admins), or Http404: the pages for
    managing a project do not exist for anyone else."""
    caller = member_caller(request, slug)
    if not caller.can(Capability.MANAGE):
        raise Http404
    return caller


def audit_caller(request: HttpRequest, slug: str) -> Caller:
    """The person as a reader of the audit log of `slug` (a Caller holding READ_AUDIT alone:
    projects.audit_log), or Http404. Its reads are each an audit row (an export) unless the
    page counts them (`audit_page_view`)."""
    caller = audit_reader(signed_in(request), slug, request_id=request_id(request))
    if caller is None:
        raise Http404
    return caller


def audit_page_view(
    request: HttpRequest, caller: Caller, operation: str, *, target_type: str, target_id: str
) -> Caller:
    """An audit page reading the log: its view is counted as `operation` (the first of each
    window an audit row naming the target) instead of a row per read."""
    if not _reading(request):
        return caller
    note_page_view(request, caller.project, operation, target_type=target_type, target_id=target_id)
    return replace(caller, reads_counted=True)


def _session_context(request: HttpRequest) -> SecurityContext:
    return SecurityContext.of_session(
        signed_in(request), request_id=request_id(request), instance=settings.HEYAIRA_INSTANCE
    )


# --- page views -----------------------------------------------------------------------------

PAGE_VIEW = "page_view"
_NOTE = "heyaira_page_view"


@dataclass(frozen=True)
class PageView:
    """A project's page read by a person, counted once it has been served."""

    project: Project
    operation: str
    target_type: str
    target_id: str


def _reading(request: HttpRequest) -> bool:
    return request.method in ("GET", "HEAD")


def note_page_view(
    request: HttpRequest,
    project: Project,
    operation: str,
    *,
    target_type: str = "page",
    target_id: str = "",
) -> None:
    """This request reads `project`: count it as a view of its page once it is served. The
    target is what the first view of a window names (the page itself, unless given)."""
    if _reading(request):
        view = PageView(project, operation, target_type, target_id or _page(request))
        setattr(request, _NOTE, view)


def count_page_view(request: HttpRequest, response: HttpResponseBase) -> None:
    """After a page was served: count its noted view (per person, page and window), the first
    of each window an audit event in the project's chain. A refused page counts no view."""
    view: PageView | None = getattr(request, _NOTE, None)
    if view is None or response.status_code >= 400:
        return
    context = _session_context(request)
    first = count_event(
        project_id=view.project.pk,
        subject=f"user:{context.user_id}",
        operation=view.operation,
        reason=_page(request),
    )
    if first:
        record_security_event(
            view.operation,
            Outcome.SUCCESS,
            context,
            project=view.project,
            target_type=view.target_type,
            target_id=view.target_id,
        )


def _page(request: HttpRequest) -> str:
    match = request.resolver_match
    return match.view_name if match is not None else request.path[:64]
