"""Operators' view of the counted events (audit.noise): superusers only, read-only.

"Anonymous rejections" counts what came without a valid credential, per source network;
"Counted events" what a known actor repeated (a revoked key used again, wrong passwords for an
account, page views), per subject and chain. The first of each bucket is also an audit event.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from audit.models import AnonymousRejection, CountedEvent


class _ReadOnlyForSuperusers(admin.ModelAdmin):
    counted: type[models.Model]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [field.name for field in self.counted._meta.fields]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AnonymousRejection)
class AnonymousRejectionAdmin(_ReadOnlyForSuperusers):
    counted = AnonymousRejection
    list_display = ["window_start", "source", "operation", "reason", "count", "last_at"]
    list_filter = ["operation", "reason"]
    search_fields = ["source"]
    date_hierarchy = "window_start"
    ordering = ["-window_start", "-count"]


@admin.register(CountedEvent)
class CountedEventAdmin(_ReadOnlyForSuperusers):
    counted = CountedEvent
    list_display = ["window_start", "chain", "subject", "operation", "reason", "count", "last_at"]
    list_filter = ["operation"]
    search_fields = ["subject", "chain", "reason"]
    date_hierarchy = "window_start"
    ordering = ["-window_start", "-count"]
