"""django-oauth-toolkit lists its five models in the admin. HeyAira issues no OpenID Connect ID
tokens (OIDC stays off), so that table is always empty and is not listed; applications, grants
and access and refresh tokens are in use and stay.

Revoking tokens ends connections for good, so DOT's bulk "revoke" actions first show a page
naming the apps, people and projects that lose them (projects.admin_confirm), as every
irreversible action in the admin does.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from oauth2_provider.admin import AccessTokenAdmin, RefreshTokenAdmin
from oauth2_provider.models import (
    get_access_token_model,
    get_id_token_model,
    get_refresh_token_model,
)

from projects.admin_confirm import Ending, action_confirmation, confirmed, plural

admin.site.unregister(get_id_token_model())


def _ending(tokens: list[Any], kind: str) -> Ending:
    count = len(tokens)
    items = [
        f"{token.application.name if token.application else 'no app'} for "
        f"{token.user.get_username() if token.user else 'nobody'} in "
        f"{token.project.slug if token.project else 'no project'} (#{token.pk})"
        for token in tokens
    ]
    return Ending(
        question=f"Revoke {plural(count, kind, kind + 's')}?",
        items=items,
        consequence="The apps holding them get 401 at once and must be authorized again; a "
        "revoked token never works again.",
        confirm=f"Yes, revoke {plural(count, 'token', 'tokens')}",
    )


def _confirm_first(
    model_admin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Any], kind: str
) -> TemplateResponse | None:
    if confirmed(request):
        return None
    tokens = list(queryset.select_related("application", "user", "project").order_by("pk"))
    return action_confirmation(
        model_admin,
        request,
        action="revoke_tokens",
        selected=[token.pk for token in tokens],
        ending=_ending(tokens, kind),
    )


class ConfirmedAccessTokenAdmin(AccessTokenAdmin):
    @admin.action(description="Revoke selected access tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
        asked = _confirm_first(self, request, queryset, "access token")
        return asked if asked is not None else super().revoke_tokens(request, queryset)


class ConfirmedRefreshTokenAdmin(RefreshTokenAdmin):
    @admin.action(description="Revoke selected refresh tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
        asked = _confirm_first(self, request, queryset, "refresh token")
        return asked if asked is not None else super().revoke_tokens(request, queryset)


for model, model_admin in (
    (get_access_token_model(), ConfirmedAccessTokenAdmin),
    (get_refresh_token_model(), ConfirmedRefreshTokenAdmin),
):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)
