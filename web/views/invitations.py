"""Invitations (projects.invitations): the page where owners and admins invite people by email
and see who is still invited, and the pages an invited person follows from the link.

The link's token is in its path only for the first request: it is checked, kept in the session
as the invitation's id and token hash, and the person is sent on to /invitations/accept/, so the
token never travels further (no Referer, no `next=` on the sign-in page, no later log line).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from audit.noise import count_rejection
from core.access import Caller, Role, roles_grantable_by
from core.errors import HeyAiraError
from core.pages import people_page
from identity.throttle import address_of
from projects import admin_reveal
from projects.invitation_accept import (
    NewAccount,
    invitation_accept,
    invitation_held,
    invitation_open,
)
from projects.invitation_mail import send_invitation
from projects.invitations import (
    InvitationUnusable,
    invitation_create,
    invitation_get,
    invitation_list,
    invitation_revoke,
)
from projects.models import Invitation
from web.access import manager_caller, request_id
from web.views.common import person_page
from web.views.dashboard import project_context

SESSION_KEY = "heyaira.invitation"
REVEAL = "invitation"


class RoleChoice(forms.ChoiceField):
    """Offers the roles the inviter may give; accepts any role name, so that a forged one
    reaches the service, which refuses it and audits the refusal."""

    def valid_value(self, value: Any) -> bool:
        return value in Role.values


class InviteForm(forms.Form):
    email = forms.CharField(
        label="Email address",
        max_length=254,
        widget=forms.TextInput(attrs={"inputmode": "email", "autocomplete": "off"}),
        help_text="The invitation link goes there; it works once.",
    )
    role = RoleChoice(label="Role")

    def __init__(self, *args: Any, roles: list[Role], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Least first, and the least chosen: granting more must be a decision.
        offered = [role for role in reversed(list(Role)) if role in roles]
        field = self.fields["role"]
        assert isinstance(field, RoleChoice)
        field.choices = [(role.value, role.label) for role in offered]
        field.initial = Role.VIEWER


class NewAccountForm(forms.Form):
    username = forms.CharField(
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
        help_text="Letters, digits and @ . + - _ only; you sign in with it.",
    )
    password1 = forms.CharField(
        label="Password",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters, not only digits, not a common password, not like "
        "your username or address.",
    )
    password2 = forms.CharField(
        label="Password, again",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", "The two passwords differ.")
        return data


def invitation_link(token: str) -> str:
    return settings.HEYAIRA_PUBLIC_URL + reverse("web:invitation_open", args=[token])


# --- the inviter's pages ----------------------------------------------------------------------


def _invite_context(caller: Caller, form: InviteForm) -> dict[str, Any]:
    context = project_context(caller, "invitations")
    context.update(
        form=form,
        invitations=invitation_list(caller),
        ttl_hours=settings.HEYAIRA_INVITATION_TTL_HOURS,
    )
    return context


@require_http_methods(["GET", "HEAD", "POST"])
@person_page
def invitations_page(request: HttpRequest, slug: str) -> HttpResponse:
    caller = manager_caller(request, slug)
    roles = roles_grantable_by(caller.role)
    form = InviteForm(request.POST or None, roles=roles)
    if request.method == "POST" and form.is_valid():
        try:
            issued = invitation_create(caller, **form.cleaned_data)
        except HeyAiraError as error:
            field = next(iter(error.details.get("fields") or {}), None)
            form.add_error(field if field in form.fields else None, error.message)
        else:
            invitation = issued.invitation
            delivery = send_invitation(invitation, invitation_link(issued.token))
            (messages.success if delivery.sent else messages.warning)(request, delivery.said)
            sent = reverse("web:invitation_sent", args=[caller.project.slug, invitation.pk])
            response = HttpResponseRedirect(sent)
            admin_reveal.seal(
                request, response, key_id=invitation.pk, secret=issued.token, kind=REVEAL
            )
            return response
    status = 400 if request.method == "POST" else 200
    return render(
        request, "web/invitations/list.html", _invite_context(caller, form), status=status
    )


@require_safe
@person_page
def invitation_sent(request: HttpRequest, slug: str, invitation_id: UUID) -> HttpResponse:
    """The link, the first time this page is opened (right after the invitation is made)."""
    caller = manager_caller(request, slug)
    invitation = invitation_get(caller, invitation_id)
    context = project_context(caller, "invitations")
    context.update(invitation=invitation, role_label=Role(invitation.role).label)
    response = TemplateResponse(request, "web/invitations/sent.html", context)
    token = admin_reveal.open_once(request, response, key_id=invitation.pk, kind=REVEAL)
    response.context_data["link"] = invitation_link(token) if token else ""  # type: ignore[index]
    return response


@require_http_methods(["GET", "HEAD", "POST"])
@person_page
def invitation_revoke_view(request: HttpRequest, slug: str, invitation_id: UUID) -> HttpResponse:
    """GET asks, naming the invitation; POST revokes it."""
    caller = manager_caller(request, slug)
    invitation = invitation_get(caller, invitation_id)
    back = reverse("web:invitations", args=[caller.project.slug])
    if request.method == "POST":
        try:
            invitation_revoke(caller, invitation_id=invitation.pk)
        except HeyAiraError as error:
            messages.error(request, error.message)
        else:
            messages.success(
                request,
                f"Revoked the invitation for {invitation.email}: its link no longer works.",
            )
        return HttpResponseRedirect(back)
    context = project_context(caller, "invitations")
    context.update(invitation=invitation, role_label=Role(invitation.role).label, back=back)
    return render(request, "web/invitations/revoke.html", context)


# --- the invited person's pages -------------------------------------------------------------


def _person(request: HttpRequest) -> Any:
    return request.user if request.user.is_authenticated else None


def _refused(request: HttpRequest, error: InvitationUnusable) -> HttpResponse:
    request.session.pop(SESSION_KEY, None)
    status = 404 if error.reason == "unknown" else 410
    return render(
        request, "web/invitations/refused.html", {"message": error.message}, status=status
    )


@require_safe
@people_page
def open_link(request: HttpRequest, token: str) -> HttpResponse:
    """The link from the mail: checked, kept in the session, and left behind at once."""
    try:
        invitation = _open(token, request)
    except InvitationUnusable as error:
        return _refused(request, error)
    request.session[SESSION_KEY] = {"id": str(invitation.pk), "hash": invitation.token_hash}
    return HttpResponseRedirect(reverse("web:invitation_accept"))


def _open(token: str, request: HttpRequest) -> Invitation:
    if len(token) > 100:
        raise InvitationUnusable("unknown")
    try:
        return invitation_open(token, person=_person(request), request_id=request_id(request))
    except InvitationUnusable as error:
        if error.reason == "unknown":
            # No project to audit it in: counted as anonymous noise, per source.
            count_rejection("invitation_accept", "unknown_invitation", address_of(request))
        raise


def _held_invitation(request: HttpRequest) -> Invitation:
    """The invitation whose link this browser opened, still acceptable; else unusable."""
    held = request.session.get(SESSION_KEY) or {}
    try:
        pk = UUID(str(held.get("id"))) if held.get("id") and held.get("hash") else None
    except ValueError:
        pk = None
    if pk is None:
        raise InvitationUnusable("unknown")
    return invitation_held(
        pk, str(held["hash"]), person=_person(request), request_id=request_id(request)
    )


@require_http_methods(["GET", "HEAD", "POST"])
@people_page
def invitation_accept_view(request: HttpRequest) -> HttpResponse:
    try:
        invitation = _held_invitation(request)
    except InvitationUnusable as error:
        return _refused(request, error)
    person = _person(request)
    # An address that has an account signs in to accept; only a new person makes one here.
    account_exists = person is None and _account_exists(invitation.email)
    form = NewAccountForm(request.POST or None) if person is None and not account_exists else None
    joining = person is not None or (form is not None and form.is_valid())
    if request.method == "POST" and joining:
        account = _new_account(form)
        try:
            membership = invitation_accept(
                invitation_id=invitation.pk,
                token_hash=invitation.token_hash,
                person=person,
                account=account,
                request_id=request_id(request),
            )
        except InvitationUnusable as error:
            return _refused(request, error)
        except HeyAiraError as error:
            _show(error, form, request)
        else:
            return _joined(request, membership, new=person is None)
    return render(
        request,
        "web/invitations/accept.html",
        {
            "invitation": invitation,
            "role_label": Role(invitation.role).label,
            "form": form,
            "person": person,
            "account_exists": account_exists,
            "sign_in": f"{reverse('login')}?next={reverse('web:invitation_accept')}",
        },
        status=400 if request.method == "POST" else 200,
    )


def _new_account(form: NewAccountForm | None) -> NewAccount | None:
    """The account a new person asks for (None when a signed-in person accepts)."""
    if form is None:
        return None
    data = form.cleaned_data
    return NewAccount(username=data["username"], password=data["password1"])


def _account_exists(email: str) -> bool:
    return get_user_model().objects.filter(email__iexact=email, is_active=True).exists()


def _show(error: HeyAiraError, form: NewAccountForm | None, request: HttpRequest) -> None:
    fields = error.details.get("fields") or {}
    shown = False
    if form is not None:
        for name, problem in fields.items():
            target = "password1" if name == "password" else name
            if target in form.fields:
                form.add_error(target, problem[:1].upper() + problem[1:])
                shown = True
    if not shown:
        messages.error(request, error.message)


def _joined(request: HttpRequest, membership: Any, *, new: bool) -> HttpResponse:
    request.session.pop(SESSION_KEY, None)
    if new:
        login(request, membership.user, backend=settings.AUTHENTICATION_BACKENDS[0])
    project = membership.project
    messages.success(
        request,
        f"Welcome to {project.name}: you are {Role(membership.role).label.lower()} here.",
    )
    return HttpResponseRedirect(reverse("web:project", args=[project.slug]))
