"""Connected apps for every signed-in person, and the project's API keys for owners and admins,
each with a revoke button that ends the credential at once (audited by the operation)."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from core.errors import HeyAiraError
from identity.connections import connected_app_revoke
from projects.api_keys import api_key_revoke
from web.access import manager_caller, member_caller, signed_in
from web.selectors.api_keys import project_api_keys
from web.selectors.connections import connected_apps
from web.views.common import person_page
from web.views.dashboard import project_context


@require_safe
@person_page
def apps_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/apps.html", {"apps": connected_apps(signed_in(request))})


@require_POST
@person_page
def app_revoke(request: HttpRequest) -> HttpResponse:
    caller = member_caller(request, request.POST.get("project", ""))
    client_id = request.POST.get("client_id", "")
    try:
        connected_app_revoke(caller, client_id=client_id)
    except HeyAiraError as error:
        messages.error(request, error.message)
    else:
        messages.success(
            request, f"Disconnected {client_id} from {caller.project.name}: its tokens are ended."
        )
    return HttpResponseRedirect(reverse("web:apps"))


@require_safe
@person_page
def api_keys_page(request: HttpRequest, slug: str) -> HttpResponse:
    caller = manager_caller(request, slug)
    keys, more = project_api_keys(caller)
    context = project_context(caller, "keys")
    context.update(keys=keys, more=more)
    return render(request, "web/api_keys.html", context)


@require_POST
@person_page
def api_key_revoke_view(request: HttpRequest, slug: str, key_id: UUID) -> HttpResponse:
    caller = manager_caller(request, slug)
    try:
        key = api_key_revoke(caller, api_key_id=key_id)
    except HeyAiraError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Revoked the key {key.label}: it is refused from now on.")
    return HttpResponseRedirect(reverse("web:api_keys", args=[caller.project.slug]))
