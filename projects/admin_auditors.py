"""The admin page where owners make people auditors of a project, and end that again.

Adding and deleting run projects.auditors' operations as the signed-in owner, so the rule
(owners only) and the audit rows are the service's; there is nothing to edit on a grant.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from projects.admin_confirm import change_url, delete_context
from projects.admin_endings import auditor_ending
from projects.admin_support import ServiceBackedAdmin, ServiceForm, caller_for
from projects.auditors import auditor_grant, auditor_revoke
from projects.models import AuditorGrant, Project

# Only owners may give the grant: they hold manage_privileged_members.
OWNER_PERMISSION = "manage_privileged_members"


class AuditorAddForm(ServiceForm):
    project_permission = OWNER_PERMISSION
    project = forms.ModelChoiceField(queryset=Project.objects.none())
    username = forms.CharField(
        max_length=150,
        help_text="They may then read this project's audit log at /audit/, and nothing else.",
    )

    class Meta:
        model = AuditorGrant
        fields: list[str] = []

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            user = self.user_named(data["username"])
            self.instance = self.run(data["project"], auditor_grant, user_id=user.pk)
        return data


@admin.register(AuditorGrant)
class AuditorAdmin(ServiceBackedAdmin):
    project_permission = OWNER_PERMISSION
    list_display = ["access", "user", "content_object"]
    list_select_related = ["user", "content_object"]
    search_fields = ["user__username", "content_object__slug"]

    @admin.display(description="access")
    def access(self, grant: AuditorGrant) -> str:
        return str(grant)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return AuditorGrant.objects.filter(content_object__in=self.managed_projects(request))

    def manages(self, request: HttpRequest, obj: Any = None) -> bool:
        managed = self.managed_projects(request)
        if obj is None:
            return managed.exists()
        return managed.filter(pk=obj.content_object_id).exists()

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        return self.form_request(AuditorAddForm, request)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["user", "content_object"] if obj is not None else ["project", "username"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["user", "content_object"] if obj is not None else []

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a grant has nothing to edit: remove it and grant again

    def delete_model(self, request: HttpRequest, obj: AuditorGrant) -> None:
        auditor_revoke(caller_for(request, obj.content_object), user_id=obj.user_id)

    delete_confirmation_template = "admin/confirm_delete.html"

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        grant = self.get_object(request, object_id)
        if grant is not None:
            extra_context = {
                **delete_context(auditor_ending(grant), back=change_url(grant)),
                **(extra_context or {}),
            }
        return super().delete_view(request, object_id, extra_context)
