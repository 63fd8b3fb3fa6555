"""Operators' view of the anonymous noise (audit.noise): superusers only, read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from audit.models import AnonymousRejection


@admin.register(AnonymousRejection)
class AnonymousRejectionAdmin(admin.ModelAdmin):
    list_display = ["window_start", "source", "operation", "reason", "count", "last_at"]
    list_filter = ["operation", "reason"]
    search_fields = ["source"]
    date_hierarchy = "window_start"
    ordering = ["-window_start", "-count"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [field.name for field in AnonymousRejection._meta.fields]

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
