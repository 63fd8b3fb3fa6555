"""The member dashboard: a project picker, then per project its tasks by status with their
handoff and readiness, a task's receipts and dependencies, decisions and notes, full-text
search and the agents' running summaries.

Every read goes through an audited selector with a Caller built from the person's own
membership (web.access); the one write is an owner's or admin's release of a stuck lease.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from continuity.models import TaskStatus
from continuity.selectors import memory_get, memory_search, task_get
from continuity.selectors.lists import receipt_list
from continuity.services import task_lease_release
from core.access import Caller, Capability, Role
from core.errors import Forbidden, HeyAiraError, NotFound, ValidationError
from projects.models import Membership
from web.access import member_caller, signed_in
from web.repository_links import project_repositories
from web.selectors.dashboard import memory_timeline, summary_agents, summary_versions
from web.selectors.memories import memory_titles, receipts_after
from web.selectors.tasks import (
    BOARD_HEADINGS,
    BOARD_STATUSES,
    dependents,
    task_board,
    task_links,
)
from web.views.common import person_page

PROJECTS_SHOWN = 200
TASKS_ON_DASHBOARD = 30
MEMORIES_ON_DASHBOARD = 5
SEARCH_RESULTS = 25
QUERY_CHARS = 200  # memory_search's limit
MEMORY_KINDS = {"decision": "Decisions only", "note": "Notes only"}


def project_context(caller: Caller, section: str) -> dict[str, Any]:
    """What the project's pages share: the project, the person's role, and which tabs exist."""
    return {
        "project": caller.project,
        "role": caller.role_label,
        "section": section,
        "may_manage": caller.can(Capability.MANAGE),
        "may_read_audit": caller.can(Capability.READ_AUDIT),
    }


@require_safe
@person_page
def project_picker(request: HttpRequest) -> HttpResponse:
    memberships = Membership.objects.filter(user_id=signed_in(request).pk)
    rows = list(
        memberships.select_related("project").order_by("project__name", "project__slug")[
            : PROJECTS_SHOWN + 1
        ]
    )
    projects = [(m.project, Role(m.role).label) for m in rows[:PROJECTS_SHOWN]]
    more = memberships.count() - PROJECTS_SHOWN if len(rows) > PROJECTS_SHOWN else 0
    return render(request, "web/projects.html", {"projects": projects, "more": more})


@require_safe
@person_page
def project_home(request: HttpRequest, slug: str) -> HttpResponse:
    caller = member_caller(request, slug)
    status = request.GET.get("status") or "open"
    problem = ""
    if status not in BOARD_STATUSES:
        problem = f"There is no task status “{status[:40]}”: open tasks are shown instead."
        status = "open"
    cursor = request.GET.get("after") or None
    board = task_board(caller, status=status, cursor=cursor, limit=TASKS_ON_DASHBOARD)
    memories = memory_timeline(caller, limit=MEMORIES_ON_DASHBOARD)
    context = project_context(caller, "overview")
    context.update(
        board=board,
        status=status,
        status_name=BOARD_STATUSES[status],
        heading=BOARD_HEADINGS[status],
        statuses=[(key, name, board.counts[key]) for key, name in BOARD_STATUSES.items()],
        paged=bool(cursor),
        problem=problem,
        memories=memories.rows,
        memories_more=memories.more,
        agents=summary_agents(caller),
        repositories=project_repositories(caller.project),
    )
    return render(request, "web/project.html", context, status=400 if problem else 200)


@require_safe
@person_page
def task_page(request: HttpRequest, slug: str, task_id: UUID) -> HttpResponse:
    caller = member_caller(request, slug)
    task = task_get(caller, task_id=task_id).task
    cursor = request.GET.get("after") or None
    receipts = receipt_list(caller, task_id=task_id, cursor=cursor)
    blocked_ids = [str(pk) for pk in task.blocked_by]
    waits_on = task_links(caller, set(blocked_ids))
    blocked_by = [waits_on[pk] for pk in blocked_ids if pk in waits_on]
    context = project_context(caller, "overview")
    context.update(
        task=task,
        blocked_by=blocked_by,
        waiting=[link for link in blocked_by if link.status != TaskStatus.DONE],
        dependents=dependents(caller, task_id),
        receipts=receipts.receipts,
        next_cursor=receipts.next_cursor,
        receipts_more=receipts_after(caller, task_id, receipts.receipts[-1].id)
        if receipts.next_cursor
        else 0,
        paged=bool(cursor),
        repositories=project_repositories(caller.project),
        lease_expired=task.lease is not None and task.lease.expires_at <= timezone.now(),
        can_release=caller.can(Capability.RELEASE_LEASES),
    )
    return render(request, "web/task.html", context)


@require_POST
@person_page
def task_lease_release_view(request: HttpRequest, slug: str, task_id: UUID) -> HttpResponse:
    """An owner or admin ends a stuck lease (continuity's task_lease_release, audited with the
    holder named): the task goes back to To do."""
    caller = member_caller(request, slug)
    try:
        released = task_lease_release(caller, task_id=task_id)
    except (NotFound, Forbidden):
        raise
    except HeyAiraError as error:
        messages.error(request, error.message)
    else:
        lease = released.released
        if lease is None:
            messages.info(request, "The task holds no lease: nothing to release.")
        else:
            messages.success(
                request,
                f"Released the lease of {lease.holder.actor}: the task is back in To do.",
            )
    return HttpResponseRedirect(reverse("web:task", args=[slug, task_id]))


@require_safe
@person_page
def memories_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Decisions and notes newest first, or, with ?q=, the full-text search's best matches."""
    caller = member_caller(request, slug)
    kind = request.GET.get("kind") or ""
    query = " ".join(request.GET.get("q", "").split())
    notes: list[str] = []
    if kind and kind not in MEMORY_KINDS:
        notes.append(f"There is no kind “{kind[:40]}”: decisions and notes are shown.")
        kind = ""
    if len(query) > QUERY_CHARS:
        notes.append(
            f"Searches take at most {QUERY_CHARS} characters: the first {QUERY_CHARS} of "
            f"your {len(query)} were searched."
        )
        query = query[:QUERY_CHARS].strip()
    context = project_context(caller, "memory")
    context.update(kind=kind, kinds=MEMORY_KINDS, query=query, notes=notes)
    if query:
        found = memory_search(caller, query=query, kind=kind or None, limit=SEARCH_RESULTS + 1)
        context.update(
            results=found.results[:SEARCH_RESULTS],
            results_cut=len(found.results) > SEARCH_RESULTS,
        )
    else:
        cursor = request.GET.get("after") or None
        timeline = memory_timeline(caller, kind=kind or None, cursor=cursor)
        context.update(
            memories=timeline.rows,
            next_cursor=timeline.next_cursor,
            more=timeline.more,
            paged=bool(cursor),
        )
    return render(request, "web/memories.html", context)


@require_safe
@person_page
def memory_page(request: HttpRequest, slug: str, memory_id: UUID) -> HttpResponse:
    caller = member_caller(request, slug)
    context = project_context(caller, "memory")
    memory = memory_get(caller, memory_id=memory_id).memory
    related = [str(pk) for pk in (memory.supersedes, memory.superseded_by) if pk]
    context.update(memory=memory, titles=memory_titles(caller, related))
    return render(request, "web/memory.html", context)


@require_safe
@person_page
def summaries_page(request: HttpRequest, slug: str) -> HttpResponse:
    caller = member_caller(request, slug)
    context = project_context(caller, "summaries")
    context["agents"] = summary_agents(caller)
    return render(request, "web/summaries.html", context)


@require_safe
@person_page
def summary_page(request: HttpRequest, slug: str, agent: str) -> HttpResponse:
    caller = member_caller(request, slug)
    before = request.GET.get("before", "")
    try:
        found = summary_versions(
            caller, agent=agent, before_version=int(before) if before.isdigit() else None
        )
    except ValidationError:
        raise Http404 from None  # no agent can have that name
    if not found.versions and not before:
        raise Http404  # no such agent here
    context = project_context(caller, "summaries")
    context.update(agent=agent, found=found, paged=bool(before))
    return render(request, "web/summary.html", context)
