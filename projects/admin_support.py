"""What the admin needs to run services on behalf of the signed-in person.

Django's admin wraps its add/change/delete views in a transaction; HeyAira services own their
transactions (durable), so the admin classes here run those views without the outer one and let
the service do the work: one path for every rule and every audit row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from guardian.shortcuts import get_objects_for_user

from core.access import Caller, Role, roles_grantable_by
from core.errors import HeyAiraError
from core.framework_internals import (
    change_view_outside_transaction,
    delete_view_outside_transaction,
)
from projects.callers import session_caller
from projects.models import Project
from projects.roles import member_role


def projects_with(user: AbstractBaseUser | AnonymousUser, perm: str) -> QuerySet[Project]:
    """Projects on which the user holds a guardian object permission (superusers: all)."""
    if not user.is_authenticated or not user.is_active:
        return Project.objects.none()
    if getattr(user, "is_superuser", False):
        return Project.objects.all()
    return get_objects_for_user(user, f"projects.{perm}", klass=Project, accept_global_perms=False)


# A list's project filter offers only the projects of the rows the person may see (the admin's
# own, scoped queryset), never every project's name: existence does not leak.
VISIBLE_PROJECTS = ("project", admin.RelatedOnlyFieldListFilter)


def caller_for(request: HttpRequest, project: Project) -> Caller:
    caller = session_caller(request.user, project, request_id=getattr(request, "request_id", ""))
    if caller is None:
        raise PermissionDenied
    return caller


def grantable_roles(user: AbstractBaseUser | AnonymousUser, project: Project) -> list[Role]:
    """The roles this person may give, change or take away in the project (superusers: all)."""
    if not user.is_authenticated or not user.is_active:
        return []
    if getattr(user, "is_superuser", False):
        return list(Role)
    role = member_role(project_id=project.pk, user_id=user.pk)
    return roles_grantable_by(role) if role else []


# pydantic's wording for shapes the admin's own fields let through, said for a person.
_PLAIN_PROBLEMS = {
    "String should match pattern": "contains characters that are not allowed here",
    "Input should be": "is not one of the choices offered",
}


def plain_problem(problem: str) -> str:
    """A field's problem as a sentence a person reads under the field."""
    for start, plain in _PLAIN_PROBLEMS.items():
        if problem.startswith(start):
            problem = plain
            break
    problem = problem[:1].upper() + problem[1:]
    return problem if problem.endswith(".") else f"{problem}."


def as_form_error(
    error: HeyAiraError, form_fields: set[str], aliases: Mapping[str, str] | None = None
) -> forms.ValidationError:
    """A service rejection shown on the form: on the fields it names when the form has them
    (`aliases` maps a service argument to the form field standing for it), else as the
    error's own sentence. Services word those sentences for people."""
    fields = error.details.get("fields") or {}
    aliases = aliases or {}
    known: dict[str, str] = {}
    for name, problem in fields.items():
        field = aliases.get(name, name)
        if field in form_fields:
            known.setdefault(field, plain_problem(problem))
    if len(known) == 1 and len(fields) == 1 and not error.message.startswith("Invalid arguments"):
        # The service worded this one problem as a sentence of its own: say that.
        known = dict.fromkeys(known, error.message)
    if known:
        return forms.ValidationError(
            {name: forms.ValidationError(problem) for name, problem in known.items()}
        )
    return forms.ValidationError(error.message)


class ServiceForm(forms.ModelForm):
    """A form whose clean() runs a service as the signed-in person; the admin injects the request.

    When the form has a `project` field, it offers only the projects on which the person holds
    `project_permission` (and picks the project when there is only one).
    """

    admin_request: HttpRequest
    project_permission: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "project" in self.fields and self.project_permission:
            offered = projects_with(self.admin_request.user, self.project_permission)
            self.fields["project"].queryset = offered  # type: ignore[attr-defined]
            only = list(offered[:2])
            if len(only) == 1:  # nothing to choose: the one project this person manages
                self.fields["project"].initial = only[0].pk

    def user_named(self, username: str) -> Any:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise forms.ValidationError({"username": "No user with this username."})
        return user

    # Service arguments shown on the form under another name (user_id is typed as a username).
    field_aliases: ClassVar[dict[str, str]] = {"user_id": "username"}

    def run(self, project: Project, service: Callable[..., Any], **arguments: Any) -> Any:
        """The service's result, or its rejection shown on the form."""
        try:
            return service(caller_for(self.admin_request, project), **arguments)
        except HeyAiraError as error:
            raise as_form_error(error, set(self.fields), self.field_aliases) from None


class ServiceBackedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose writes happen in services called from the form's clean().

    Rows belong to projects; `project_permission` names the guardian object permission that
    lets a non-superuser see and manage the rows of a project.
    """

    project_permission: ClassVar[str] = ""

    def managed_projects(self, request: HttpRequest) -> QuerySet[Project]:
        return projects_with(request.user, self.project_permission)

    def manages(self, request: HttpRequest, obj: Any = None) -> bool:
        managed = self.managed_projects(request)
        return managed.exists() if obj is None else managed.filter(pk=obj.project_id).exists()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        managed = self.managed_projects(request)
        return super().get_queryset(request).filter(project__in=managed)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.manages(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.manages(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.manages(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.manages(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.manages(request, obj)

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        return change_view_outside_transaction(self, request, object_id, form_url, extra_context)

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            return delete_view_outside_transaction(self, request, object_id, extra_context)
        except HeyAiraError as error:
            self.message_user(request, error.message, level=messages.ERROR)
            return HttpResponseRedirect(request.path.rsplit("delete/", 1)[0])

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        # Bulk delete would bypass the per-object rules.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """The service already saved it during form validation."""

    def form_request(self, form_class: type[forms.ModelForm], request: HttpRequest) -> type:
        """Give the form the request, so its clean() can build the Caller."""

        class RequestForm(form_class):  # type: ignore[misc, valid-type]
            admin_request = request

        return RequestForm
