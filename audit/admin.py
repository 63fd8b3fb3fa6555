"""Operators' view of the counted events (audit.noise): superusers only, read-only.

"Anonymous rejections" counts what came without a valid credential, per source network;
"Counted events" what a known actor repeated (a revoked key used again, wrong passwords for an
account, page views), per subject and chain. The first of each bucket is also an audit event.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from audit.admin_read_only import ReadOnlyAdmin
from audit.models import AnonymousRejection, CountedEvent


class _ReadOnlyForSuperusers(ReadOnlyAdmin):
    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(getattr(request.user, "is_superuser", False))


@admin.register(AnonymousRejection)
class AnonymousRejectionAdmin(_ReadOnlyForSuperusers):
    list_display = ["window_start", "source", "operation", "reason", "count", "last_at"]
    list_filter = ["operation", "reason"]
    search_fields = ["source"]
    date_hierarchy = "window_start"
    ordering = ["-window_start", "-count"]


@admin.register(CountedEvent)
class CountedEventAdmin(_ReadOnlyForSuperusers):
    list_display = ["window_start", "chain", "subject", "operation", "reason", "count", "last_at"]
    list_filter = ["operation"]
    search_fields = ["subject", "chain", "reason"]
    date_hierarchy = "window_start"
    ordering = ["-window_start", "-count"]
