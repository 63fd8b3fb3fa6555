"""The authorization server's machine endpoints: metadata, token, registration.

The consent page is identity.consent; sign-in is identity.signin.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from oauth2_provider import views as dot

from audit.models import Outcome
from audit.noise import count_rejection
from identity import audit, ratelimit
from identity.http import json_error, no_store, token_request_client_id
from identity.policy import redirect_uri_problems, resource_for_metadata_path

REGISTRATION_WINDOW_SECONDS = 3600


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
    """RFC 7591, open to anonymous clients: rate limited per source address, https or loopback
    redirect URIs only (Application.clean() enforces them; checked first here to answer RFC
    7591's own `invalid_redirect_uri`)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        address = request.META.get("REMOTE_ADDR", "")
        hit = ratelimit.hit(
            "dcr",
            address,
            limit=settings.HEYAIRA_DCR_RATE_LIMIT_PER_HOUR,
            window=REGISTRATION_WINDOW_SECONDS,
        )
        if not hit.allowed:
            if hit.first_refusal:
                self._audit(request, Outcome.REJECTED, error_code="rate_limited")
            response = JsonResponse(
                {
                    "error": "rate_limited",
                    "error_description": "Too many registrations from this address; retry later.",
                },
                status=429,
            )
            response["Retry-After"] = str(hit.retry_after)
            return response
        problems = redirect_uri_problems(_requested_redirect_uris(request.body))
        if problems:
            self._audit(request, Outcome.REJECTED, error_code="invalid_redirect_uri")
            return no_store(
                JsonResponse(
                    {"error": "invalid_redirect_uri", "error_description": "; ".join(problems)},
                    status=400,
                )
            )
        response = super().post(request, *args, **kwargs)
        if response.status_code == 201:
            client_id = str(json.loads(response.content).get("client_id", ""))
            self._audit(request, Outcome.SUCCESS, client_id=client_id)
        else:
            self._audit(request, Outcome.REJECTED, error_code=json_error(response.content))
        return no_store(response)

    def _audit(
        self, request: HttpRequest, outcome: Outcome, *, client_id: str = "", error_code: str = ""
    ) -> None:
        audit.record_oauth(
            audit.CLIENT_REGISTER,
            outcome,
            client_id=client_id,
            target_type="oauth_client" if client_id else "",
            target_id=client_id[:64],
            error_code=error_code,
            request_id=getattr(request, "request_id", ""),
        )


def _requested_redirect_uris(body: bytes) -> list[str]:
    """The redirect_uris of a registration request; malformed input is DOT's to refuse."""
    try:
        data = json.loads(body)
    except ValueError:
        return []
    uris = data.get("redirect_uris") if isinstance(data, dict) else None
    if not isinstance(uris, list):
        return []
    return [uri for uri in uris if isinstance(uri, str)]
