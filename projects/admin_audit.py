"""Audit events in the admin: read-only for everyone, superusers included.

Each person sees the events of the projects whose audit log they may read
(projects.audit_log.readable_projects: the same rule as the web pages and the operations).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.html import format_html

from audit.admin_read_only import ReadOnlyAdmin
from audit.models import AuditEvent
from projects import audit_log
from projects.admin_audit_filters import AuditEventFilters
from projects.models import Project


def readable_projects(request: HttpRequest) -> QuerySet[Project]:
    return audit_log.readable_projects(request.user)


# Values longer than this are cut in the list (with the full value on hover and on the
# event's own page): a 150-character username must not widen the list past a 1280 px window.
LIST_CHARS = 24


def _cut(value: str, limit: int = LIST_CHARS) -> str:
    if len(value) <= limit:
        return value
    return format_html('<span title="{}">{}…</span>', value, value[: limit - 1])


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    # Five short columns fit a 1280x800 window beside the filters; the request id, target,
    # client and fingerprint are on each event's page (and the request id is searchable).
    list_display = ["when", "project_slug", "operation", "result", "actor"]
    list_display_links = ["when"]
    # The audit log's filters (the web list's), then two only operators ask for.
    list_filter = [AuditEventFilters, "actor_type", "credential_kind"]
    search_fields = ["request_id", "actor_label", "target_id", "operation"]
    date_hierarchy = "occurred_at"

    @admin.display(description="when (UTC)", ordering="occurred_at")
    def when(self, event: AuditEvent) -> str:
        return event.occurred_at.strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description="project", ordering="project_slug_shown")
    def project_slug(self, event: AuditEvent) -> str:
        # The row keeps a plain project_id; its slug comes from the list's own query.
        slug = getattr(event, "project_slug_shown", None)
        return _cut(slug) if slug else "-"

    @admin.display(description="outcome", ordering="outcome")
    def result(self, event: AuditEvent) -> str:
        return f"{event.outcome}: {event.error_code}" if event.error_code else event.outcome

    @admin.display(description="actor", ordering="actor_label")
    def actor(self, event: AuditEvent) -> str:
        return _cut(event.actor_label or event.actor_type)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> TemplateResponse:
        # The widest list in the admin gets the width the side navigation would take; the
        # breadcrumbs still lead back.
        context = {"is_nav_sidebar_enabled": False, **(extra_context or {})}
        return super().changelist_view(request, context)  # type: ignore[return-value]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditEvent]:
        # One subquery names each row's project (a deleted project shows "-").
        slug = Project.objects.filter(pk=OuterRef("project_id")).values("slug")[:1]
        events = super().get_queryset(request).annotate(project_slug_shown=Subquery(slug))
        if getattr(request.user, "is_superuser", False):
            return events
        return events.filter(project_id__in=readable_projects(request).values("pk"))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return readable_projects(request).exists()

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return readable_projects(request).exists()
        return audit_log.may_read_audit(request.user, obj.project_id)
