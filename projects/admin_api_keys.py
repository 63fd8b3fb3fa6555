"""The admin for project API keys: owners and admins create and revoke their projects' keys.

Creating redirects to a page that shows the secret once (projects.admin_reveal); nothing else
ever shows it again.
Keys are revoked (an action), never edited or deleted: the audit log keeps naming them.
Non-superusers see only the keys of projects where they hold `projects.manage_api_keys`.
"""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from core.access import Scope
from core.errors import HeyAiraError
from projects import admin_reveal
from projects.admin_confirm import action_confirmation, confirmed, plural, quoted
from projects.admin_endings import api_keys_ending
from projects.admin_support import VISIBLE_PROJECTS, ServiceBackedAdmin, ServiceForm, caller_for
from projects.api_keys import api_key_create, api_key_revoke
from projects.models import ApiKey

PERMISSION = "manage_api_keys"


class ApiKeyAddForm(ServiceForm):
    project_permission = PERMISSION
    username = forms.CharField(
        max_length=150, help_text="The member the key acts for; it gets that member's role."
    )
    scopes = forms.MultipleChoiceField(
        choices=[(str(scope), str(scope)) for scope in Scope],
        widget=forms.CheckboxSelectMultiple,
        initial=[str(Scope.CONTINUITY_READ)],
        help_text="Never more than the member's role allows.",
    )
    expires_days = forms.IntegerField(
        min_value=1, max_value=3650, required=False, help_text="Leave empty for no expiry."
    )

    class Meta:
        model = ApiKey
        fields = ["project", "label"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.issued_secret = ""

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        user = self.user_named(data["username"])
        issued = self.run(
            data["project"],
            api_key_create,
            user_id=user.pk,
            label=data["label"],
            scopes=data["scopes"],
            expires_days=data.get("expires_days"),
        )
        self.instance = issued.api_key
        self.issued_secret = issued.secret
        return data


@admin.register(ApiKey)
class ApiKeyAdmin(ServiceBackedAdmin):
    project_permission = PERMISSION
    list_display = [
        "label",
        "project",
        "user",
        "key_prefix",
        "scope_list",
        "expires_at",
        "revoked_at",
        "last_used_at",
        "created_by",
    ]
    list_filter = [VISIBLE_PROJECTS, "revoked_at"]
    list_select_related = ["project", "user"]
    search_fields = ["label", "prefix", "user__username", "project__slug"]
    actions = ["revoke_selected"]
    readonly_fields = [
        "project",
        "user",
        "label",
        "key_prefix",
        "scope_list",
        "expires_at",
        "revoked_at",
        "last_used_at",
        "created_at",
        "created_by",
    ]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            return self.form_request(ApiKeyAddForm, request)
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return [(None, {"fields": ["project", "username", "label", "scopes", "expires_days"]})]
        return [(None, {"fields": self.readonly_fields})]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return self.readonly_fields if obj is not None else []

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        """The service created the key during validation; keep its secret for this response."""
        request.issued_api_key_secret = getattr(form, "issued_secret", "")  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        """Redirect to the one-time page (POST/redirect/GET: a reload never mints a second
        key), handing the secret over as projects.admin_reveal explains."""
        secret: str = getattr(request, "issued_api_key_secret", "")
        if not secret:
            return super().response_add(request, obj, post_url_continue)
        response = HttpResponseRedirect(reverse("admin:projects_apikey_created", args=[obj.pk]))
        admin_reveal.seal(request, response, key_id=obj.pk, secret=secret)
        response["Cache-Control"] = "no-store"
        return response

    def get_urls(self) -> list[URLPattern]:
        created = path(
            "<uuid:key_id>/created/",
            self.admin_site.admin_view(self.created_view),
            name="projects_apikey_created",
        )
        return [created, *super().get_urls()]

    def created_view(self, request: HttpRequest, key_id: uuid.UUID) -> HttpResponse:
        """The secret, the first time this page is opened; afterwards only the key's name."""
        key = self.get_queryset(request).filter(pk=key_id).first()
        if key is None:
            raise Http404("No such API key.")
        response = TemplateResponse(
            request,
            "admin/projects/apikey/created.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.model._meta,
                "api_key": key,
                "title": f"API key “{key.label}”",
            },
        )
        response.context_data["secret"] = admin_reveal.open_once(  # type: ignore[index]
            request, response, key_id=key.pk
        )
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke the selected API keys")
    def revoke_selected(
        self, request: HttpRequest, queryset: QuerySet[ApiKey]
    ) -> TemplateResponse | None:
        """First a page naming the keys that will stop working; revoked on its "Yes" only."""
        live = list(
            queryset.filter(revoked_at__isnull=True)
            .select_related("project", "user")
            .order_by("project__slug", "label", "pk")
        )
        if not live:
            self.message_user(request, "The selected keys are revoked already.", messages.WARNING)
            return None
        if not confirmed(request):
            return action_confirmation(
                self,
                request,
                action="revoke_selected",
                selected=[key.pk for key in live],
                ending=api_keys_ending(live, already=queryset.count() - len(live)),
            )
        revoked: list[str] = []
        for key in live:
            try:
                api_key_revoke(caller_for(request, key.project), api_key_id=key.pk)
            except HeyAiraError as error:
                self.message_user(request, f"{key.label}: {error.message}", level=messages.ERROR)
                continue
            revoked.append(key.label)
        if revoked:
            self.message_user(
                request,
                f"Revoked {plural(len(revoked), 'API key', 'API keys')}: {quoted(revoked)}. "
                "They are refused from now on.",
            )
        return None

    @admin.display(description="key")
    def key_prefix(self, obj: ApiKey) -> str:
        return f"hak_{obj.prefix}_…"

    @admin.display(description="scopes")
    def scope_list(self, obj: ApiKey) -> str:
        return " ".join(obj.scopes)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # keys are immutable; revoking is the action above

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
