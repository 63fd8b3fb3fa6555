"""Deleting a project in the admin: a confirmation that counts what the project holds and takes
its slug typed, then the project_delete operation (owners only; it checks the slug again)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from projects.admin_confirm import change_url, delete_context
from projects.admin_endings import project_ending
from projects.admin_support import caller_for
from projects.models import Project
from projects.services import project_delete


class ProjectDeletion(admin.ModelAdmin):
    """Mixed into ProjectAdmin."""

    delete_confirmation_template = "admin/projects/project/delete_confirmation.html"

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        project = self.get_object(request, object_id)
        if project is not None:
            ending = project_ending(project)
            extra_context = {
                **delete_context(ending, back=change_url(project)),
                **(extra_context or {}),
            }
        return super().delete_view(request, object_id, extra_context)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """Counts, not a list of every row (a project may hold a million), and no per-model
        permission check: the project_delete operation decides who may delete a project (its
        owners), and deletes what it holds with it."""
        return [], {}, set(), []

    def delete_model(self, request: HttpRequest, obj: Project) -> None:
        # The slug the owner typed on the confirmation page; the operation checks it.
        typed = request.POST.get("confirm_slug", "")
        project_delete(caller_for(request, obj), confirm_slug=typed)
