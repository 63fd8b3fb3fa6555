"""The Django admin for superusers and for project owners and admins who are not superusers.

Owners and admins see only their own projects' memberships and repository bindings (guardian
object permissions derived from Membership.role); every change goes through a service, so the
rules (admins cannot touch admin/owner memberships, a project keeps an owner) and the audit rows
are the same as everywhere else.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from audit.recorder import AuditNote, record_after_failure
from core.access import Role
from core.errors import Forbidden, HeyAiraError
from projects.admin_confirm import change_url, delete_context
from projects.admin_deletion import ProjectDeletion
from projects.admin_endings import membership_ending
from projects.admin_support import (
    VISIBLE_PROJECTS,
    ServiceBackedAdmin,
    ServiceForm,
    as_form_error,
    caller_for,
    grantable_roles,
    projects_with,
)
from projects.callers import session_caller
from projects.models import Membership, Project, ProjectRepository, Provider, Repository
from projects.services import (
    membership_add,
    membership_change,
    membership_remove,
    project_create,
    project_rename,
    repository_bind,
    repository_unbind,
)

admin.site.site_header = "HeyAira administration"
INVITE_LINKS = 10  # projects offered an "Invite by email" link above the memberships
admin.site.site_title = "HeyAira"


def _may_manage_any(request: HttpRequest, perm: str) -> bool:
    return projects_with(request.user, perm).exists()


# --- memberships --------------------------------------------------------------------------


class RoleField(forms.ChoiceField):
    """Offers only the roles the signed-in person may grant; accepts any role name, so that a
    forged one reaches the service, which refuses it and audits the refusal."""

    def valid_value(self, value: str) -> bool:
        return value in Role.values


def role_field(roles: list[Role]) -> RoleField:
    """The roles offered, the least of them chosen until someone picks another: granting more
    than meant must take a decision, never a missed default. (A membership being changed shows
    its own role instead.)"""
    least = Role.VIEWER if Role.VIEWER in roles else None
    return RoleField(choices=[(role.value, role.label) for role in roles], initial=least)


class MembershipAddForm(ServiceForm):
    project_permission = "manage_members"
    username = forms.CharField(
        max_length=150,
        help_text="The person's HeyAira username. Not on HeyAira yet? Invite them by email "
        "(the links above the list of memberships).",
    )
    role = RoleField(choices=Role.choices, initial=Role.VIEWER)

    class Meta:
        model = Membership
        fields = ["project", "role"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        projects = list(self.fields["project"].queryset)  # type: ignore[attr-defined]
        user = self.admin_request.user
        self.grantable = {str(p.pk): grantable_roles(user, p) for p in projects}
        chosen = self._chosen_project(projects)
        if chosen is not None:
            offered = self.grantable[chosen]
        else:  # the page narrows the list to the chosen project's (admin/.../change_form.html)
            offered = [r for r in Role if any(r in roles for roles in self.grantable.values())]
        self.fields["role"] = role_field(offered)
        self.fields["project"].widget.attrs["data-grantable-roles"] = json.dumps(
            {pk: [role.value for role in roles] for pk, roles in self.grantable.items()}
        )

    def _chosen_project(self, projects: list[Project]) -> str | None:
        value = self.data.get("project") if self.is_bound else self.initial.get("project")
        value = value or self.fields["project"].initial
        return str(value) if value is not None and str(value) in self.grantable else None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            user = self.user_named(data["username"])
            self.instance = self.run(
                data["project"], membership_add, user_id=user.pk, role=data["role"]
            )
        return data


class MembershipChangeForm(ServiceForm):
    class Meta:
        model = Membership
        fields = ["role"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        roles = grantable_roles(self.admin_request.user, self.instance.project)
        self.fields["role"] = role_field(roles)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors and "role" in self.changed_data:
            self.instance = self.run(
                self.instance.project,
                membership_change,
                membership_id=self.instance.pk,
                role=data["role"],
            )
        return data


@admin.register(Membership)
class MembershipAdmin(ServiceBackedAdmin):
    project_permission = "manage_members"
    list_display = ["user", "project", "role", "updated_at"]
    list_filter = ["role", VISIBLE_PROJECTS]
    search_fields = ["user__username", "project__slug"]
    ordering = ["project__slug", "user__username"]
    list_select_related = ["project", "user"]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # People not on HeyAira yet are invited by email, from each project's invitations page.
        invite = list(self.managed_projects(request).order_by("slug")[:INVITE_LINKS])
        return super().changelist_view(
            request, {"invite_projects": invite, **(extra_context or {})}
        )

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        base = MembershipChangeForm if obj is not None else MembershipAddForm
        return self.form_request(base, request)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["project", "user"] if obj is not None else []

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = ["project", "user", "role"] if obj is not None else ["project", "username", "role"]
        return [(None, {"fields": fields})]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_change_permission(request, obj) and self._may_grant(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_delete_permission(request, obj) and self._may_grant(request, obj)

    def _may_grant(self, request: HttpRequest, obj: Membership | None) -> bool:
        """An admin sees an admin's or owner's membership but may not change or remove it: the
        page is then read-only rather than offering what the service would refuse."""
        return obj is None or obj.role in grantable_roles(request.user, obj.project)

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        membership_remove(caller_for(request, obj.project), membership_id=obj.pk)

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if request.method == "POST" and object_id is not None:
            self._audit_forged_post(request, object_id, "membership_change")
        return super().changeform_view(request, object_id, form_url, extra_context)

    delete_confirmation_template = "admin/confirm_delete.html"

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if request.method == "POST":
            self._audit_forged_post(request, object_id, "membership_remove")
        membership = self.get_object(request, object_id)
        if membership is not None:
            ending = membership_ending(membership)
            extra_context = {
                **delete_context(ending, back=change_url(membership)),
                **(extra_context or {}),
            }
        return super().delete_view(request, object_id, extra_context)

    def _audit_forged_post(self, request: HttpRequest, object_id: str, operation: str) -> None:
        """A change or removal posted to a page that was shown read-only: Django answers 403
        before any service runs, so the refusal is audited here, as the service would have."""
        obj = self.get_object(request, object_id)
        if obj is None or self._may_grant(request, obj):
            return
        caller = session_caller(
            request.user, obj.project, request_id=getattr(request, "request_id", "")
        )
        if caller is not None:
            note = AuditNote(target_type="membership", target_id=str(obj.pk))
            record_after_failure(caller, operation, note, Forbidden.code)


# --- repository bindings ------------------------------------------------------------------


class BindingAddForm(ServiceForm):
    project_permission = "manage_repositories"
    provider = forms.ChoiceField(choices=Provider.choices)
    owner = forms.CharField(
        max_length=100,
        help_text="The account or organisation: letters, digits, '.', '_' and '-'.",
    )
    name = forms.CharField(
        max_length=100, help_text="The repository's name: letters, digits, '.', '_' and '-'."
    )
    url = forms.URLField(max_length=300, assume_scheme="https")
    default_branch = forms.CharField(max_length=100, initial="main")
    installation_ref = forms.CharField(
        max_length=100,
        required=False,
        help_text="Optional app-installation id (a reference, never a token).",
    )
    commit_url_template = forms.CharField(
        max_length=300,
        required=False,
        label="Commit link",
        help_text="Only for hosts other than GitHub and GitLab: the web address of a commit, "
        "with {commit} where its id goes (https://git.example.com/acme/app/commit/{commit}).",
    )
    branch_url_template = forms.CharField(
        max_length=300,
        required=False,
        label="Branch link",
        help_text="Likewise for a branch, with {branch} where its name goes.",
    )

    class Meta:
        model = ProjectRepository
        fields = ["project"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            arguments = {name: data[name] for name in self.declared_fields}
            self.instance = self.run(data["project"], repository_bind, **arguments)
        return data


@admin.register(ProjectRepository)
class ProjectRepositoryAdmin(ServiceBackedAdmin):
    project_permission = "manage_repositories"
    list_display = ["project", "repository", "created_at"]
    list_filter = [VISIBLE_PROJECTS]
    search_fields = ["repository__owner", "repository__name", "project__slug"]
    list_select_related = ["project", "repository"]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        return self.form_request(BindingAddForm, request)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None:
            return ["project", "repository", *self.link_fields(obj), "created_at"]
        return [
            "project",
            "provider",
            "owner",
            "name",
            "url",
            "default_branch",
            "installation_ref",
            "commit_url_template",
            "branch_url_template",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return []
        return ["project", "repository", *self.link_fields(obj), "created_at"]

    @staticmethod
    def link_fields(binding: ProjectRepository) -> list[str]:
        names = ("commit_url_template", "branch_url_template")
        return [name for name in names if getattr(binding, name)]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a binding has nothing to edit: unbind and bind again

    def delete_model(self, request: HttpRequest, obj: ProjectRepository) -> None:
        repository_unbind(caller_for(request, obj.project), binding_id=obj.pk)


# --- projects and repositories ------------------------------------------------------------


class ProjectAddForm(ServiceForm):
    """A superuser creates a project with its first owner, through the project service."""

    owner = forms.ModelChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        help_text="The first owner; they can add everyone else.",
    )

    class Meta:
        model = Project
        fields = ["slug", "name"]
        help_texts = {
            "slug": "Lowercase letters, digits and hyphens; it names the project in commands.",
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        request = self.admin_request
        try:
            self.instance = project_create(
                slug=data["slug"],
                name=data["name"],
                owner_username=data["owner"].get_username(),
                by=request.user,  # type: ignore[arg-type]
                request_id=getattr(request, "request_id", ""),
            )
        except HeyAiraError as error:
            raise as_form_error(error, set(self.fields)) from None
        return data


class ProjectChangeForm(ServiceForm):
    class Meta:
        model = Project
        fields = ["name"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors and "name" in self.changed_data:
            self.instance = self.run(self.instance, project_rename, name=data["name"])
        return data


@admin.register(Project)
class ProjectAdmin(ProjectDeletion, ServiceBackedAdmin):
    """Owners rename or delete their project; admins see it; superusers also create projects
    (with their first owner)."""

    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Project]:
        return projects_with(request.user, "manage_members")

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        return self.form_request(ProjectChangeForm if obj else ProjectAddForm, request)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["slug", "name", "created_at"] if obj is not None else ["slug", "name", "owner"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["slug", "created_at"] if obj is not None else []

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _superuser(request) or _may_manage_any(request, "manage_members")

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return projects_with(request.user, "manage_members").filter(pk=obj.pk).exists()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return _superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owns(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owns(request, obj)

    def _owns(self, request: HttpRequest, obj: Project | None) -> bool:
        owned = projects_with(request.user, "manage_privileged_members")
        return owned.exists() if obj is None else owned.filter(pk=obj.pk).exists()


def _superuser(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and getattr(user, "is_superuser", False))


@admin.register(Repository)
class RepositoryAdmin(admin.ModelAdmin):
    """Repository identities are shared between projects: only superusers edit them."""

    list_display = ["provider", "owner", "name", "default_branch"]
    search_fields = ["owner", "name"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)


# Register their admins.
from projects import admin_api_keys, admin_audit, admin_auditors, admin_people  # noqa: E402, F401
