"""The front door at `/`: what this server is, where to sign in, and what to paste into a client.

Signed-in people also see who they are and their projects with their role there. It reads only
the person's own memberships, bounded, and nothing about anyone else.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from core.access import Role
from core.pages import people_page
from projects.models import Membership

# More projects than this are left to the admin's lists; the page says how many there are.
PROJECTS_SHOWN = 50


@dataclass(frozen=True)
class ProjectRow:
    name: str
    slug: str
    role: str


@require_safe
@people_page
def front_door(request: HttpRequest) -> HttpResponse:
    context: dict[str, object] = {
        "mcp_url": settings.HEYAIRA_MCP_RESOURCE,
        "identity_url": f"{settings.HEYAIRA_PUBLIC_URL}/api/v1/identity",
        "healthz_url": f"{settings.HEYAIRA_PUBLIC_URL}/healthz",
        "readyz_url": f"{settings.HEYAIRA_PUBLIC_URL}/readyz",
        "instance": settings.HEYAIRA_INSTANCE,
    }
    if request.user.is_authenticated:
        memberships = Membership.objects.filter(user_id=request.user.pk)
        rows = memberships.select_related("project").order_by("project__name", "project__slug")
        projects = [
            ProjectRow(name=m.project.name, slug=m.project.slug, role=Role(m.role).label)
            for m in rows[:PROJECTS_SHOWN]
        ]
        context["projects"] = projects
        count = memberships.count() if len(projects) == PROJECTS_SHOWN else len(projects)
        context.update(project_count=count, project_more=count - len(projects))
    return render(request, "web/front_door.html", context)
