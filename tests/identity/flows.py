"""OAuth flows driven through Django's test client: register, consent, exchange, refresh.

Everything goes through the real endpoints (DOT, oauthlib, our validator); nothing is mocked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from django.conf import settings
from django.test import Client

from audit.models import AuditEvent
from identity.models import AccessToken
from projects.models import Project

MCP = settings.HEYAIRA_MCP_RESOURCE
API = settings.HEYAIRA_API_RESOURCE
REDIRECT_URI = "http://127.0.0.1:8765/callback"
ALL_SCOPES = "continuity:read continuity:write audit:read"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, challenge_of(verifier)


def challenge_of(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass
class OAuthClient:
    client_id: str
    redirect_uri: str
    client_secret: str | None = None
    registration: dict[str, Any] = field(default_factory=dict)


def register(
    client: Client,
    *,
    redirect_uris: list[str] | None = None,
    auth_method: str = "none",
    name: str = "Test client",
    address: str = "127.0.0.1",
) -> OAuthClient:
    response = register_raw(
        client,
        {
            "client_name": name,
            "redirect_uris": redirect_uris or [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": auth_method,
        },
        address=address,
    )
    assert response.status_code == 201, response.content
    data = response.json()
    return OAuthClient(
        client_id=data["client_id"],
        redirect_uri=data["redirect_uris"][0],
        client_secret=data.get("client_secret"),
        registration=data,
    )


def register_raw(client: Client, metadata: dict[str, Any], *, address: str = "127.0.0.1") -> Any:
    return client.post(
        "/oauth/register/",
        data=json.dumps(metadata),
        content_type="application/json",
        REMOTE_ADDR=address,
    )


@dataclass
class Authorization:
    """One authorization request's parameters, PKCE verifier included."""

    oauth: OAuthClient
    scope: str = ALL_SCOPES
    resource: str | None = MCP
    state: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    verifier: str = ""
    challenge: str = ""
    method: str | None = "S256"
    redirect_uri: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.verifier:
            self.verifier, self.challenge = pkce_pair()

    def url(self) -> str:
        params: list[tuple[str, str]] = [
            ("response_type", "code"),
            ("client_id", self.oauth.client_id),
            ("redirect_uri", self.redirect_uri or self.oauth.redirect_uri),
            ("scope", self.scope),
            ("state", self.state),
        ]
        if self.challenge:
            params.append(("code_challenge", self.challenge))
        if self.method:
            params.append(("code_challenge_method", self.method))
        if self.resource:
            params.append(("resource", self.resource))
        params += list(self.extra.items())
        return "/oauth/authorize/?" + urlencode(params)


def consent_page(client: Client, auth: Authorization) -> Any:
    return client.get(auth.url())


def consent_post_data(page: Any, *, project: Project | None, allow: bool = True) -> dict[str, str]:
    form = page.context["form"]
    data = {f.html_name: f.value() or "" for f in form.hidden_fields()}
    if project is not None:
        data["project"] = str(project.pk)
    if allow:
        data["allow"] = "Authorize"
    return data


def approve(
    client: Client, auth: Authorization, project: Project, *, allow: bool = True
) -> dict[str, str]:
    """Show the consent page, answer it, and return the redirect's query parameters."""
    page = consent_page(client, auth)
    assert page.status_code == 200, page.content
    response = client.post(auth.url(), consent_post_data(page, project=project, allow=allow))
    assert response.status_code == 302, response.content
    return redirect_params(response)


def redirect_params(response: Any) -> dict[str, str]:
    query = parse_qs(urlsplit(response["Location"]).query)
    return {name: values[0] for name, values in query.items()}


def exchange(
    client: Client,
    auth: Authorization,
    code: str,
    *,
    verifier: str | None = None,
    client_id: str | None = None,
    resource: str | None = None,
    redirect_uri: str | None = None,
    omit_verifier: bool = False,
) -> Any:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri or auth.redirect_uri or auth.oauth.redirect_uri,
        "client_id": client_id or auth.oauth.client_id,
        "code_verifier": auth.verifier if verifier is None else verifier,
    }
    if omit_verifier:
        del data["code_verifier"]
    if resource:
        data["resource"] = resource
    return client.post("/oauth/token/", data)


def refresh(
    client: Client,
    oauth: OAuthClient,
    refresh_token: str,
    *,
    scope: str | None = None,
    resource: str | None = None,
) -> Any:
    data = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": oauth.client_id,
    }
    if scope:
        data["scope"] = scope
    if resource:
        data["resource"] = resource
    return client.post("/oauth/token/", data)


def tokens_for(
    client: Client, oauth: OAuthClient, project: Project, **auth_args: Any
) -> dict[str, Any]:
    """A full, successful authorization: consent, then the code exchange. Returns the tokens."""
    auth = Authorization(oauth, **auth_args)
    params = approve(client, auth, project)
    response = exchange(client, auth, params["code"])
    assert response.status_code == 200, response.content
    return dict(response.json())


def events(operation: str, **filters: Any) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(operation=operation, **filters).order_by("occurred_at"))


def last_event(operation: str, **filters: Any) -> AuditEvent:
    found = events(operation, **filters)
    assert found, f"no {operation} audit event matching {filters}"
    return found[-1]


def issued_tokens() -> Any:
    """Access tokens issued to clients (DCR's registration tokens are rows too: not these)."""
    return AccessToken.objects.filter(project__isnull=False)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# A short repeat window for tests that must get past it: real time passes, nothing is moved.
SHORT_WINDOW_SECONDS = 1


def after_the_window() -> None:
    """Sleep until a refresh token rotated before this call is past SHORT_WINDOW_SECONDS."""
    time.sleep(SHORT_WINDOW_SECONDS + 0.2)
