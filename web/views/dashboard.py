"""The member dashboard: a project picker, then per project its open tasks with their handoff,
a task's receipts, decisions and notes, full-text search and the agents' running summaries.

Every read goes through an audited selector with a Caller built from the person's own
membership (web.access); nothing here writes task or memory data.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from continuity.selectors import memory_get, memory_search, task_get
from continuity.selectors.lists import receipt_list
from core.access import Caller, Capability, Role
from projects.models import Membership
from web.access import member_caller, signed_in
from web.selectors.dashboard import memory_timeline, summary_agents, summary_versions, task_board
from web.views.common import person_page

PROJECTS_SHOWN = 200
MEMORIES_ON_DASHBOARD = 5
SEARCH_RESULTS = 25


def project_context(caller: Caller, section: str) -> dict[str, Any]:
    """What the project's pages share: the project, the person's role, and which tabs exist."""
    return {
        "project": caller.project,
        "role": Role(caller.role).label,
        "section": section,
        "may_manage": caller.can(Capability.MANAGE),
        "may_read_audit": caller.can(Capability.READ_AUDIT),
    }


@require_safe
@person_page
def project_picker(request: HttpRequest) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user_id=signed_in(request).pk)
        .select_related("project")
        .order_by("project__name", "project__slug")[:PROJECTS_SHOWN]
    )
    projects = [(m.project, Role(m.role).label) for m in memberships]
    return render(request, "web/projects.html", {"projects": projects})


@require_safe
@person_page
def project_home(request: HttpRequest, slug: str) -> HttpResponse:
    caller = member_caller(request, slug)
    board = task_board(caller, cursor=request.GET.get("after") or None)
    memories = memory_timeline(caller, limit=MEMORIES_ON_DASHBOARD)
    context = project_context(caller, "overview")
    context.update(
        tasks=board.rows,
        next_cursor=board.next_cursor,
        paged=bool(request.GET.get("after")),
        memories=memories.rows,
        agents=summary_agents(caller),
    )
    return render(request, "web/project.html", context)


@require_safe
@person_page
def task_page(request: HttpRequest, slug: str, task_id: UUID) -> HttpResponse:
    caller = member_caller(request, slug)
    task = task_get(caller, task_id=task_id)["task"]
    receipts = receipt_list(caller, task_id=task_id, cursor=request.GET.get("after") or None)
    context = project_context(caller, "overview")
    context.update(
        task=task,
        receipts=receipts["receipts"],
        next_cursor=receipts["next_cursor"],
        paged=bool(request.GET.get("after")),
    )
    return render(request, "web/task.html", context)


@require_safe
@person_page
def memories_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Decisions and notes newest first, or, with ?q=, the full-text search's best matches."""
    caller = member_caller(request, slug)
    kind = request.GET.get("kind") or None
    query = request.GET.get("q", "").strip()
    context = project_context(caller, "memory")
    context.update(kind=kind or "", query=query)
    if query:
        found = memory_search(caller, query=query, kind=kind, limit=SEARCH_RESULTS)
        context["results"] = found["results"]
    else:
        timeline = memory_timeline(caller, kind=kind, cursor=request.GET.get("after") or None)
        context.update(
            memories=timeline.rows,
            next_cursor=timeline.next_cursor,
            paged=bool(request.GET.get("after")),
        )
    return render(request, "web/memories.html", context)


@require_safe
@person_page
def memory_page(request: HttpRequest, slug: str, memory_id: UUID) -> HttpResponse:
    caller = member_caller(request, slug)
    context = project_context(caller, "memory")
    context["memory"] = memory_get(caller, memory_id=memory_id)["memory"]
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
    versions, next_before = summary_versions(
        caller, agent=agent, before_version=int(before) if before.isdigit() else None
    )
    if not versions and not before:
        raise Http404  # no such agent here
    context = project_context(caller, "summaries")
    context.update(agent=agent, versions=versions, next_before=next_before, paged=bool(before))
    return render(request, "web/summary.html", context)
