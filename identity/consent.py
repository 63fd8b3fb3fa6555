"""The consent page: the signed-in person picks one of their projects and approves or denies.

The prompt is always shown: `approval_prompt=auto` and `skip_authorization` would let DOT issue
a code with no project chosen (the validator refuses such a code anyway). The scopes shown and
granted are the requested ones that the person's role in the chosen project allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import method_decorator
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView
from oauthlib.oauth2.rfc6749 import errors as oauth_errors

from audit.models import Outcome
from audit.noise import count_rejection
from core.access import Role
from core.pages import people_page
from identity import audit
from identity.cimd import refusals
from identity.cimd.document import is_url_client_id, published_at
from identity.http import with_iss
from identity.models import Application
from identity.policy import cap_scopes, default_resource, resource_label, scope_description
from projects.models import Membership, Project


@dataclass(frozen=True)
class ProjectChoice:
    value: str
    name: str
    slug: str
    role: str
    granted: list[str]  # descriptions of what this project's role lets the client have
    checked: bool


class ConsentForm(AllowForm):
    project = forms.ModelChoiceField(
        queryset=Project.objects.none(), required=False, widget=forms.RadioSelect
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        memberships = Membership.objects.filter(user_id=user.pk).values_list("project_id", "role")
        self.roles = {project_id: Role(role) for project_id, role in memberships}
        # A tampered POST naming a project the person is not in is then an invalid choice.
        self.fields["project"].queryset = Project.objects.filter(pk__in=self.roles)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not Application.objects.filter(client_id=data.get("client_id", "")).exists():
            raise forms.ValidationError("This request names no registered client.")
        if not data.get("allow"):
            return data
        project = data.get("project")
        if project is None:
            self.add_error("project", "Choose the project this connection may use.")
            return data
        granted = cap_scopes(data.get("scope", "").split(), self.roles[project.pk])
        if not granted:
            self.add_error("project", "Your role in this project allows none of the access asked.")
            return data
        data["scope"] = " ".join(granted)
        return data

    def requested_scopes(self) -> list[str]:
        return str(self["scope"].value() or "").split()

    def choices(self) -> list[ProjectChoice]:
        requested = self.requested_scopes()
        chosen = str(self["project"].value() or "")
        projects = list(self.fields["project"].queryset)
        return [
            ProjectChoice(
                value=str(project.pk),
                name=project.name,
                slug=project.slug,
                role=self.roles[project.pk].label,
                granted=[
                    scope_description(s) for s in cap_scopes(requested, self.roles[project.pk])
                ],
                checked=chosen == str(project.pk) or len(projects) == 1,
            )
            for project in projects
        ]


@method_decorator(people_page, name="dispatch")
class ConsentView(AuthorizationView):
    template_name = "oauth/consent.html"
    form_class = ConsentForm

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.GET.get("approval_prompt", "force") != "force":
            query = request.GET.copy()
            query["approval_prompt"] = "force"
            # DOT reads approval_prompt from request.GET; oauthlib reads the URI, unaffected.
            request.GET = query  # type: ignore[assignment]
        return super().get(request, *args, **kwargs)

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Notes for the whole request: the validator says why a client was refused on GET too.
        with audit.noting(getattr(request, "request_id", "")):
            return super().dispatch(request, *args, **kwargs)

    def handle_no_permission(self) -> HttpResponse:
        """Refuse a bad request before asking anyone to sign in for it."""
        try:
            self.validate_authorization_request(self.request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        return super().handle_no_permission()

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        kwargs["user"] = self.request.user
        return kwargs

    def form_valid(self, form: ConsentForm) -> HttpResponse:
        self.consent = form.cleaned_data
        return super().form_valid(form)

    def form_invalid(self, form: ConsentForm) -> HttpResponse:
        audit.record_oauth(
            audit.CONSENT,
            Outcome.REJECTED,
            user=self.request.user,
            client_id=str(form["client_id"].value() or ""),
            error_code="validation_error",
        )
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def create_authorization_response(
        self, request: HttpRequest, scopes: str, credentials: dict[str, Any], allow: bool
    ) -> Any:
        consent = getattr(self, "consent", None)
        if allow and consent is not None:
            # Every credentials key becomes an attribute of the oauthlib request. Without a
            # consent form (skip_authorization) there is no project, and the validator refuses.
            credentials["project"] = consent["project"]
        return super().create_authorization_response(request, scopes, credentials, allow)

    def error_response(self, error: Any, application: Any, **kwargs: Any) -> HttpResponse:
        oauth_error = error.oauthlib_error
        client_id = str(oauth_error.client_id or self.request.GET.get("client_id", ""))
        code = audit.current_notes().reason or authorize_error_code(oauth_error)
        if code in refusals.REASONS:
            # A client ID metadata document refused (or over the registration limits): the
            # page says why, and the audit log counts it as a refused registration.
            oauth_error.description = refusals.description(code, client_id)
            self._audit_refused_registration(client_id, code)
        else:
            if code == "redirect_uri_mismatch" and is_url_client_id(client_id):
                oauth_error.description = (
                    "The redirect URI is not one of those the application lists in its "
                    f"published description at {client_id[:200]}."
                )
            self._audit_refusal(oauth_error, client_id, code)
        response = super().error_response(error, application, **kwargs)
        if code in refusals.LIMIT_CODES:
            response.status_code = 429
        return response

    def _audit_refusal(self, oauth_error: Any, client_id: str, code: str) -> None:
        denied = isinstance(oauth_error, oauth_errors.AccessDeniedError)
        user = self.request.user if self.request.user.is_authenticated else None
        consent = getattr(self, "consent", None) or {}
        audit.record_oauth(
            audit.CONSENT if denied else audit.AUTHORIZE,
            Outcome.REJECTED,
            user=user,
            project=consent.get("project") if user else None,
            client_id=client_id,
            error_code=code,
            request_id=getattr(self.request, "request_id", ""),
        )

    def _audit_refused_registration(self, client_id: str, code: str) -> None:
        user = self.request.user if self.request.user.is_authenticated else None
        address = self.request.META.get("REMOTE_ADDR", "")
        if user is None and not count_rejection(audit.CLIENT_REGISTER, code, address):
            return  # anyone can send these: counted per network, the first of a window kept
        audit.record_oauth(
            audit.CLIENT_REGISTER,
            Outcome.REJECTED,
            user=user,
            client_id=client_id,
            target_type="cimd_client" if is_url_client_id(client_id) else "",
            target_id=client_id,
            error_code=code,
            request_id=getattr(self.request, "request_id", ""),
        )

    def redirect(self, redirect_to: str, application: Any) -> HttpResponse:
        issuer = oauth2_settings.oauth2_authorization_server_issuer(self.request)
        return super().redirect(with_iss(redirect_to, issuer), application)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        form = context.get("form")
        if isinstance(form, ConsentForm):
            context.update(consent_context(form))
        return context


def consent_context(form: ConsentForm) -> dict[str, Any]:
    """What the page shows; read from the form, so a re-rendered POST shows the same."""
    client = Application.objects.filter(client_id=str(form["client_id"].value() or "")).first()
    redirect = urlsplit(str(form["redirect_uri"].value() or ""))
    resource = str(form["resource"].value() or "") or default_resource()
    documented = (
        client is not None and client.registration_source == Application.RegistrationSource.CIMD
    )
    return {
        "client_name": (client.name if client else "") or "An unnamed application",
        # A client ID metadata document's host is who publishes the app: a look-alike name
        # cannot borrow it.
        "published_at": published_at(client.client_id) if documented and client else "",
        "document_url": client.client_id if documented and client else "",
        "redirect_host": redirect.netloc,
        "resource_label": resource_label(resource),
        "requested": [scope_description(s) for s in form.requested_scopes()],
        "choices": form.choices(),
    }


# oauthlib's error classes that share a generic `error` value, told apart for the audit log.
_SPECIFIC_ERRORS: dict[type[oauth_errors.OAuth2Error], str] = {
    oauth_errors.MismatchingRedirectURIError: "redirect_uri_mismatch",
    oauth_errors.InvalidRedirectURIError: "invalid_redirect_uri",
    oauth_errors.MissingRedirectURIError: "missing_redirect_uri",
    oauth_errors.InvalidClientIdError: "invalid_client",
    oauth_errors.MissingClientIdError: "invalid_client",
    oauth_errors.MissingCodeChallengeError: "pkce_missing",
    oauth_errors.UnsupportedCodeChallengeMethodError: "pkce_method_refused",
}


def authorize_error_code(error: oauth_errors.OAuth2Error) -> str:
    return _SPECIFIC_ERRORS.get(type(error), error.error)
