"""Audit events in the admin: read-only for everyone, superusers included.

Owners and admins see their projects' events; people granted view_project_audit on a project
(auditors who are not members) see that project's events.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from audit.models import AuditEvent
from projects.admin_support import projects_with
from projects.models import Project


def readable_projects(request: HttpRequest) -> QuerySet[Project]:
    # Owners and admins hold manage_members; auditors hold view_project_audit.
    return projects_with(request.user, "manage_members") | projects_with(
        request.user, "view_project_audit"
    )


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = [
        "occurred_at",
        "project",
        "operation",
        "outcome",
        "error_code",
        "actor_type",
        "actor_label",
        "request_id",
    ]
    list_filter = ["outcome", "operation", "actor_type", "credential_kind"]
    search_fields = ["request_id", "actor_label", "target_id", "operation"]
    date_hierarchy = "occurred_at"
    list_select_related = ["project"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditEvent]:
        events = super().get_queryset(request)
        if getattr(request.user, "is_superuser", False):
            return events
        return events.filter(Q(project__in=readable_projects(request)))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [field.name for field in AuditEvent._meta.fields]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return readable_projects(request).exists()

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        readable = readable_projects(request)
        if obj is None:
            return readable.exists()
        return (
            getattr(request.user, "is_superuser", False)
            or readable.filter(pk=obj.project_id).exists()
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
