"""HeyAira's OAuth rules in one place: audiences, redirect URIs, scopes per role, lifetimes.

Everything here is pure policy (plus one membership query); the validator, the consent form, the
registration view and the authentication component all ask this module, so a rule is written
once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import refresh_token_expire_timedelta
from oauth2_provider.settings import oauth2_settings

from core.access import Role, scopes_for_role

if TYPE_CHECKING:
    from identity.models import AccessToken, RefreshToken

# A refresh-token family ends this long after its first token, however active it is: DOT only
# knows an idle expiry, and a stolen but regularly used token must not live forever.
REFRESH_FAMILY_LIFETIME = timedelta(days=30)


LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_REDIRECT_URIS = 10
MAX_REDIRECT_URI_LENGTH = 2000


def scope_description(scope: str) -> str:
    """What a scope lets a client do, as the consent page says it (OAUTH2_PROVIDER["SCOPES"])."""
    return str(oauth2_settings.SCOPES.get(scope, scope))


def allowed_resources() -> tuple[str, str]:
    """The two audiences a token may name: the MCP endpoint and the REST API."""
    return (settings.HEYAIRA_MCP_RESOURCE, settings.HEYAIRA_API_RESOURCE)


def default_resource() -> str:
    """A client that names no resource is asking for the MCP endpoint (MCP clients' default)."""
    return str(settings.HEYAIRA_MCP_RESOURCE)


def resource_label(resource: str) -> str:
    if resource == settings.HEYAIRA_API_RESOURCE:
        return "the HeyAira REST API"
    return "the HeyAira MCP endpoint"


def metadata_url(resource: str) -> str:
    """RFC 9728 section 3.1: the well-known segment goes between the origin and the path."""
    parts = urlsplit(resource)
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"


def resource_for_metadata_path(path: str) -> str | None:
    """Which resource a protected-resource metadata document describes, from the URL's tail.

    The root document describes the MCP endpoint (what MCP clients look for first).
    """
    tail = "/" + path.strip("/") if path.strip("/") else ""
    if tail == "":
        return default_resource()
    for resource in allowed_resources():
        if urlsplit(resource).path == tail:
            return resource
    return None


def code_digest(code: str) -> str:
    """Authorization codes are stored as SHA-256 digests, like tokens: a database read never
    yields a redeemable code."""
    return hashlib.sha256(code.encode()).hexdigest()


def redirect_uri_problems(uris: Iterable[str]) -> list[str]:
    """Why redirect URIs are refused: https with a host, or http to a loopback host only.

    Custom schemes (javascript:, data:, app schemes), wildcards, fragments and user info are
    refused outright; they are the usual ways to steal a code from a redirect.
    """
    uris = list(uris)
    if len(uris) > MAX_REDIRECT_URIS:
        return [f"at most {MAX_REDIRECT_URIS} redirect URIs may be registered"]
    return [problem for uri in uris if (problem := _redirect_uri_problem(uri))]


def _redirect_uri_problem(uri: str) -> str | None:
    shown = uri[:80]
    if len(uri) > MAX_REDIRECT_URI_LENGTH:
        return f"{shown}...: longer than {MAX_REDIRECT_URI_LENGTH} characters"
    if any(ch in uri for ch in "*#") or any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in uri):
        return f"{shown}: wildcards, fragments, spaces and control characters are not allowed"
    try:
        parts = urlsplit(uri)
        hostname = parts.hostname
        parts.port  # noqa: B018 (raises ValueError on a malformed port)
    except ValueError:
        return f"{shown}: not a valid URL"
    if "@" in parts.netloc:
        return f"{shown}: user info is not allowed"
    if parts.scheme == "https" and hostname:
        return None
    if parts.scheme == "http" and hostname in LOOPBACK_HOSTS:
        return None
    return f"{shown}: use https, or http to localhost, 127.0.0.1 or [::1] only"


def cap_scopes(requested: Iterable[str], role: Role) -> list[str]:
    """The requested scopes this role may hold, sorted: consent and refresh never grant more."""
    allowed = {str(scope) for scope in scopes_for_role(role)}
    return sorted({scope for scope in requested if scope in allowed})


def access_token_problem(token: AccessToken, audience: str) -> str | None:
    """Why an access token cannot be used at this audience (an audit error code), or None."""
    if token.project_id is None or not token.resource:
        # DOT reads an empty resource as "any audience"; DCR's registration token is such a row.
        return "token_unbound"
    if token.is_expired():
        return "token_expired"
    if list(token.resource) != [audience]:
        return "wrong_audience"
    return None


def refresh_family_expired(started: datetime | None) -> bool:
    return started is not None and timezone.now() >= started + REFRESH_FAMILY_LIFETIME


def refresh_token_usable(row: RefreshToken, client_pk: int) -> bool:
    """DOT's checks of a live refresh token: this client's, still paired with an access token,
    and not idle past REFRESH_TOKEN_EXPIRE_SECONDS since that access token expired."""
    if row.application_id != client_pk or row.access_token is None:
        return False
    idle = refresh_token_expire_timedelta()
    return not (idle and row.access_token.expires + idle <= timezone.now())
