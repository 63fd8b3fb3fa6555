"""Connected apps for every signed-in person, and the project's API keys for owners and admins,
each with a button that ends the credential at once (audited by the operation).

Ending one cannot be undone, so it takes two posts: the button asks (a page that names what
will end and what follows, changing nothing), and only that page's own button, posted with
`confirm=yes`, acts. Cancel is a link back to the list.
"""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from core.errors import HeyAiraError
from identity.connections import connected_app_revoke
from projects.api_keys import api_key_revoke
from web.access import manager_caller, member_caller, signed_in
from web.selectors.api_keys import project_api_key, project_api_keys
from web.selectors.connections import connected_apps
from web.views.common import person_page
from web.views.dashboard import project_context


def _confirmed(request: HttpRequest) -> bool:
    return request.POST.get("confirm") == "yes"


@require_safe
@person_page
def apps_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/apps.html", {"apps": connected_apps(signed_in(request))})


@require_POST
@person_page
def app_revoke(request: HttpRequest) -> HttpResponse:
    caller = member_caller(request, request.POST.get("project", ""))
    client_id = request.POST.get("client_id", "")
    back = reverse("web:apps")
    if not _confirmed(request):
        app = next(
            (
                app
                for app in connected_apps(signed_in(request))
                if app.project_slug == caller.project.slug and app.client_id == client_id
            ),
            None,
        )
        if app is None:
            messages.error(request, f"No app {client_id!r} is connected to {caller.project.name}.")
            return HttpResponseRedirect(back)
        context = {
            "title": f"Disconnect “{app.name}” from {app.project_name}?",
            "consequence": "Its tokens end at once: its next call is refused, and it must ask "
            "you again, on its consent page, before it can use this project.",
            "action": reverse("web:app_revoke"),
            "fields": {"project": app.project_slug, "client_id": app.client_id},
            "button": f"Disconnect {app.name}",
            "back": back,
        }
        return render(request, "web/confirm.html", context)
    try:
        connected_app_revoke(caller, client_id=client_id)
    except HeyAiraError as error:
        messages.error(request, error.message)
    else:
        messages.success(
            request, f"Disconnected {client_id} from {caller.project.name}: its tokens are ended."
        )
    return HttpResponseRedirect(back)


@require_safe
@person_page
def api_keys_page(request: HttpRequest, slug: str) -> HttpResponse:
    caller = manager_caller(request, slug)
    keys, more = project_api_keys(caller)
    context = project_context(caller, "keys")
    context.update(keys=keys, more=more, now=timezone.now())
    return render(request, "web/api_keys.html", context)


@require_POST
@person_page
def api_key_revoke_view(request: HttpRequest, slug: str, key_id: UUID) -> HttpResponse:
    caller = manager_caller(request, slug)
    back = reverse("web:api_keys", args=[caller.project.slug])
    if not _confirmed(request):
        key = project_api_key(caller, key_id)
        if key is None:
            raise Http404
        if key.revoked_at is not None:
            messages.info(request, f"The key {key.label} is already revoked.")
            return HttpResponseRedirect(back)
        context = {
            **project_context(caller, "keys"),
            "title": f"Revoke key “{key.label}”?",
            "consequence": "Agents using it will get 401 at once: every call with it is "
            "refused from now on. A revoked key cannot be restored; make a new one instead.",
            "action": reverse("web:api_key_revoke", args=[caller.project.slug, key.pk]),
            "fields": {},
            "button": f"Revoke {key.label}",
            "back": back,
        }
        return render(request, "web/confirm.html", context)
    try:
        key = api_key_revoke(caller, api_key_id=key_id)
    except HeyAiraError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Revoked the key {key.label}: it is refused from now on.")
    return HttpResponseRedirect(back)
