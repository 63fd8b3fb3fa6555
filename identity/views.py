"""The authorization server's machine endpoints: metadata, token, registration.

The consent page is identity.consent; sign-in is identity.signin.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters
from oauth2_provider import views as dot
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.signals import app_authorized

from audit.models import Outcome
from audit.noise import count_rejection
from identity import audit, registration
from identity.http import json_error, no_store, token_request_client_id
from identity.models import AccessToken
from identity.policy import resource_for_metadata_path


class ProtectedResourceMetadataView(dot.OAuthProtectedResourceMetadataView):
    """RFC 9728, one document per resource: the root and /mcp describe the MCP endpoint,
    /api the REST API. DOT's setting would give every path the same `resource`."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if resource_for_metadata_path(kwargs.get("resource_path", "")) is None:
            return JsonResponse({"error": "not_found"}, status=404)
        return super().get(request, *args, **kwargs)

    def get_resource(self, request: HttpRequest) -> str:
        match = request.resolver_match
        path = match.kwargs.get("resource_path", "") if match else ""
        return resource_for_metadata_path(path) or ""


class TokenView(dot.TokenView):
    """DOT's token endpoint, answering JSON that no cache keeps, and audited.

    Issued tokens are audited by the validator, inside the issuing transaction; refusals are
    audited here, after oauthlib has answered.
    """

    @method_decorator(sensitive_post_parameters("password", "client_secret"))
    def authorization_flow_token_response(
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        """DOT's, except that the issued access token it announces (`app_authorized`) is looked
        up with first(), not get(): a repeated refresh answer's access token may be rotated
        away by a concurrent request in the moment after it was chosen, and that must not turn
        into a 500 (the client then refreshes again and gets the newer answer)."""
        _url, headers, body, status = self.create_token_response(request)
        if status == 200:
            issued = str(json.loads(body).get("access_token", ""))
            checksum = hashlib.sha256(issued.encode()).hexdigest()
            token = AccessToken.objects.filter(token_checksum=checksum).first()
            if token is not None:
                app_authorized.send(sender=self, request=request, token=token)
        response = HttpResponse(content=body, status=status)
        for name, value in headers.items():
            response[name] = value
        return response

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with audit.noting(getattr(request, "request_id", "")) as notes:
            response = super().post(request, *args, **kwargs)
            if response.status_code != 200:
                self._audit_refusal(request, response, notes)
        if response.content.startswith(b"{"):
            # oauthlib sets no Content-Type on some errors (invalid_target among them).
            response["Content-Type"] = "application/json"
        return no_store(response)

    def _audit_refusal(
        self, request: HttpRequest, response: HttpResponse, notes: audit.RequestNotes
    ) -> None:
        error = json_error(response.content) or f"http_{response.status_code}"
        if error == "invalid_grant" and notes.pkce_checked and not notes.reason:
            # The code was valid and oauthlib then compared the verifier (validators.py).
            notes.reason = "pkce_verifier_mismatch"
        grant_type = request.POST.get("grant_type", "")
        operation = audit.TOKEN_OPERATIONS.get(grant_type, audit.TOKEN_OTHER_GRANT)
        anonymous = notes.user is None and notes.project is None
        address = request.META.get("REMOTE_ADDR", "")
        if anonymous and not count_rejection(operation, (notes.reason or error)[:32], address):
            return  # nobody's grant: counted per source, the first of a window recorded
        audit.record_oauth(
            operation,
            Outcome.REJECTED,
            user=notes.user,
            project=notes.project,
            client_id=token_request_client_id(request),
            error_code=notes.reason or error,
        )


class RegistrationView(dot.DynamicClientRegistrationView):
    """RFC 7591, open to anonymous clients, within the registration limits (per network and
    overall), https or loopback redirect URIs only; identity.registration does the work."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not all(
            permission().has_permission(request)
            for permission in oauth2_settings.DCR_REGISTRATION_PERMISSION_CLASSES
        ):
            return JsonResponse({"error": "access_denied"}, status=401)
        address = request.META.get("REMOTE_ADDR", "")
        refusal = registration.admit_network(address)
        if refusal is not None:
            return refused_registration(request, refusal, address)
        try:
            prepared = registration.prepare(request.body)  # hashes, if at all, before any query
        except registration.MetadataError as error:
            record_registration(request, Outcome.REJECTED, error_code=error.error)
            answer = {"error": error.error, "error_description": error.description}
            return no_store(JsonResponse(answer, status=400))
        refusal = registration.admit_growth()
        if refusal is not None:
            return refused_registration(request, refusal, address)
        answer = registration.register(prepared, request_id=getattr(request, "request_id", ""))
        return no_store(JsonResponse(answer, status=201))


def refused_registration(
    request: HttpRequest, refusal: registration.Refusal, address: str
) -> HttpResponse:
    """429 for a registration over a limit. Anyone can send these as fast as they like, so
    not every one is a row: the per-network limit sheds a flood without touching the database
    (its first refusal of each window is recorded); the cap's refusals, which asked the
    database anyway, are counted per network and reason (the first of each window recorded)."""
    if refusal.code == "rate_limited":
        noteworthy = refusal.first_of_window
    else:
        noteworthy = count_rejection(audit.CLIENT_REGISTER, refusal.code, address)
    if noteworthy:
        record_registration(request, Outcome.REJECTED, error_code=refusal.code)
    response = JsonResponse(
        {"error": refusal.code, "error_description": refusal.description}, status=429
    )
    response["Retry-After"] = str(refusal.retry_after)
    return no_store(response)


def record_registration(request: HttpRequest, outcome: Outcome, *, error_code: str) -> None:
    audit.record_oauth(
        audit.CLIENT_REGISTER,
        outcome,
        error_code=error_code,
        request_id=getattr(request, "request_id", ""),
    )
