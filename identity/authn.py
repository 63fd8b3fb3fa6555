"""The one authentication component: an Authorization header in, a Caller out.

Every protected endpoint (the MCP endpoint, the REST API) calls `authenticate` and nothing else
reads credentials. Two credentials are accepted, both as `Authorization: Bearer ...` and only
there (never from a query string or a body):

- OAuth access tokens, valid only at the resource they were issued for (their audience) and
  only while their user still belongs to their project;
- project API keys (`hak_...`), valid at both resources.

The Caller's role is always the user's *current* role; its scopes are the credential's, so the
effective capability is role AND scope (docs/architecture.md, "The tenancy rule"). Failures raise
AuthenticationFailed, which carries the complete HTTP answer (status, WWW-Authenticate, error body).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

from django.conf import settings
from django.db import DatabaseError, router
from django.utils import timezone

from audit.models import Outcome
from audit.noise import count_event, count_rejection
from audit.recorder import (
    SecurityContext,
    defer_security_event,
    fingerprint,
    record_security_event,
)
from core.access import Actor, ActorType, Caller, Credential, CredentialKind, Role, Scope
from core.database import retry_lost_connection, unavailable_from, unreachable
from core.errors import Forbidden, HeyAiraError, Unauthenticated, Unavailable
from core.statements import CompiledSelect
from core.stepup import InsufficientScope
from identity import audit
from identity.models import AccessToken
from identity.policy import access_token_problem, metadata_url
from projects.api_keys import (
    api_key_and_role,
    api_key_prefix,
    api_key_touch,
    looks_like_api_key,
)
from projects.models import ApiKey
from projects.roles import active_role, role_subquery

logger = logging.getLogger(__name__)

ResourceName = Literal["mcp", "api"]
RESOURCES: dict[str, str] = {
    "mcp": settings.HEYAIRA_MCP_RESOURCE,
    "api": settings.HEYAIRA_API_RESOURCE,
}
# The scope a client should ask for when it has nothing yet: what the tools and the API use.
DEFAULT_SCOPES: tuple[str, ...] = (Scope.CONTINUITY_READ, Scope.CONTINUITY_WRITE)

# RFC 6750 section 2.1: b64token
_BEARER = re.compile(r"^Bearer +([A-Za-z0-9\-._~+/]+=*) *$", re.IGNORECASE)


class AuthenticationFailed(Exception):
    """A refused request, with the complete HTTP answer to give."""

    def __init__(self, status: int, www_authenticate: str, error: HeyAiraError) -> None:
        super().__init__(error.message)
        self.status = status
        self.www_authenticate = www_authenticate
        self.error = error


def authenticate(
    authorization: str | None,
    *,
    resource: ResourceName,
    request_id: str,
    client_address: str = "",
) -> Caller:
    """The Caller behind an Authorization header at this resource (sync: it queries the ORM).

    No credential: 401 with a challenge but no `error` (RFC 6750 section 3.1). A bad, expired,
    revoked, unbound or other-audience credential: 401 `invalid_token`, audited.
    """
    attempt = _Attempt(resource, request_id, client_address)
    if not authorization or not authorization.strip():
        raise AuthenticationFailed(401, challenge(resource), Unauthenticated())
    if not authorization.lstrip().lower().startswith("bearer"):
        # Another scheme (Basic, ...) is not a credential here.
        raise AuthenticationFailed(401, challenge(resource), Unauthenticated())
    match = _BEARER.match(authorization.strip())
    if match is None:
        attempt.fail("malformed_credential", "The Authorization header is not a Bearer token.")
    token = match.group(1)
    try:
        return retry_lost_connection(lambda: _caller_for(token, attempt))
    except DatabaseError as error:
        unavailable = unavailable_from(error)
        if unavailable is None:
            raise
        logger.warning("authentication at %s: the database is unavailable", resource)
        audit_row = defer_security_event if unreachable(error) else record_security_event
        audit_row(
            audit.AUTHENTICATE,
            Outcome.REJECTED,
            _unchecked_context(token, attempt),
            error_code=unavailable.code,
        )
        raise unavailable from error


def defer_unavailable_audit(
    authorization: str | None, *, resource: ResourceName, request_id: str
) -> None:
    """Audit a request refused `unavailable` before authentication could even start (no
    database thread came free): the row waits for the database (audit.recorder)."""
    match = _BEARER.match((authorization or "").strip())
    attempt = _Attempt(resource, request_id, "")
    context = _unchecked_context(match.group(1) if match else "", attempt)
    defer_security_event(audit.AUTHENTICATE, Outcome.REJECTED, context, error_code=Unavailable.code)


def _caller_for(token: str, attempt: _Attempt) -> Caller:
    if looks_like_api_key(token):
        return _api_key_caller(token, attempt)
    return _oauth_caller(token, attempt)


def _unchecked_context(token: str, attempt: _Attempt) -> SecurityContext:
    """Who a credential that could not be checked claims to be: its kind and the fingerprint
    its audit rows carry (derived from the credential alone, never the credential)."""
    kind, tag = "", ""
    if looks_like_api_key(token):
        prefix = api_key_prefix(token)
        kind, tag = CredentialKind.API_KEY, fingerprint(prefix) if prefix else ""
    elif token:
        checksum = hashlib.sha256(token.encode()).hexdigest()
        kind, tag = CredentialKind.OAUTH_TOKEN, fingerprint(checksum)
    return SecurityContext(
        request_id=attempt.request_id,
        resource=attempt.audience,
        instance=settings.HEYAIRA_INSTANCE,
        credential_kind=kind,
        credential_fingerprint=tag,
    )


def challenge(
    resource: ResourceName,
    *,
    error: str | None = None,
    description: str | None = None,
    scopes: Iterable[str] = (),
) -> str:
    """The WWW-Authenticate value for this resource: where its metadata is, what to ask for."""
    params: list[tuple[str, str]] = []
    if error:
        params.append(("error", error))
    if description:
        params.append(("error_description", description))
    params.append(("resource_metadata", metadata_url(RESOURCES[resource])))
    params.append(("scope", " ".join(sorted(set(scopes))) or " ".join(DEFAULT_SCOPES)))
    return "Bearer " + ", ".join(f'{name}="{_quoted(value)}"' for name, value in params)


def insufficient_scope(caller: Caller, required: Iterable[str]) -> AuthenticationFailed:
    """403 naming every scope in `required`, so the client can step up (RFC 6750 3.1)."""
    needed = sorted({str(scope) for scope in required})
    return _forbidden_with_challenge(
        caller,
        needed,
        Forbidden(f"This request needs the scopes {', '.join(needed)}.", required_scopes=needed),
    )


def step_up(caller: Caller, refusal: InsufficientScope) -> AuthenticationFailed:
    """The HTTP answer to a step-up refusal (core.stepup), the same on MCP and REST."""
    return _forbidden_with_challenge(caller, refusal.challenge_scopes, refusal)


def _forbidden_with_challenge(
    caller: Caller, scopes: Iterable[str], error: HeyAiraError
) -> AuthenticationFailed:
    return AuthenticationFailed(
        403,
        challenge(
            _resource_name(caller.resource),
            error="insufficient_scope",
            description="The credential lacks a scope this request needs.",
            scopes=scopes,
        ),
        error,
    )


@dataclass(frozen=True)
class _Subject:
    """What is known about a refused credential, for its audit row (never the secret)."""

    user: Any = None
    project: Any = None
    client_id: str = ""
    kind: str = ""
    tag: str = ""
    actor: tuple[ActorType, str, str] | None = None  # an API key acts as itself


class _Attempt:
    """One authentication attempt: where, and how a refusal is audited and answered."""

    def __init__(self, resource: ResourceName, request_id: str, client_address: str) -> None:
        self.resource = resource
        self.audience = RESOURCES[resource]
        self.request_id = request_id
        self.client_address = client_address

    def fail(self, reason: str, description: str, subject: _Subject | None = None) -> NoReturn:
        if subject is not None:
            # A credential of ours (revoked, expired, another audience, no longer a member):
            # worth an auditor's look, but a leaked revoked key used a million times must not
            # grow its project's chain a million rows. The first of each (credential, reason)
            # per window is a row; the rest are counted exactly (audit.noise).
            if self._first_of_window(reason, subject):
                self._audit(reason, subject)
        elif count_rejection(audit.AUTHENTICATE, reason, self.client_address):
            # No credential of ours behind it (a bogus token or key): counted per source, with
            # an audit row for the first of each window only (audit.noise).
            self._audit(reason, _Subject())
        logger.info(
            "credential refused at %s: %s (from %s)", self.resource, reason, self.client_address
        )
        raise AuthenticationFailed(
            401,
            challenge(self.resource, error="invalid_token", description=description),
            Unauthenticated(description),
        )

    def _first_of_window(self, reason: str, subject: _Subject) -> bool:
        return count_event(
            project_id=subject.project.pk if subject.project is not None else None,
            subject=f"{subject.kind}:{subject.tag}",
            operation=audit.AUTHENTICATE,
            reason=reason,
        )

    def _audit(self, reason: str, subject: _Subject) -> None:
        audit.record_oauth(
            audit.AUTHENTICATE,
            Outcome.REJECTED,
            user=subject.user,
            project=subject.project,
            client_id=subject.client_id,
            resource=self.audience,
            error_code=reason,
            credential_kind=subject.kind,
            fingerprint=subject.tag,
            request_id=self.request_id,
            actor=subject.actor,
        )


def _oauth_caller(token: str, attempt: _Attempt) -> Caller:
    checksum = hashlib.sha256(token.encode()).hexdigest()
    # One query (from the primary: a revocation deletes the row, and must count at once).
    row = _TOKEN_BY_CHECKSUM.first(router.db_for_write(AccessToken), checksum=checksum)
    if row is None:
        # Unknown, or revoked (revocation deletes the row).
        attempt.fail("invalid_token", "The access token is unknown or revoked.")
    client_id = row.application.client_id if row.application else ""
    subject = _Subject(
        row.user, row.project, client_id, CredentialKind.OAUTH_TOKEN, fingerprint(checksum)
    )
    problem = access_token_problem(row, attempt.audience)
    if problem is not None:
        attempt.fail(problem, _DESCRIPTIONS[problem], subject)
    role = active_role(row.role, user_is_active=row.user is not None and row.user.is_active)
    if role is None:
        attempt.fail("not_a_member", _DESCRIPTIONS["not_a_member"], subject)
    return Caller(
        project=row.project,
        role=role,
        scopes=frozenset(row.scope.split()),
        actor=Actor(type=ActorType.USER, id=str(row.user.pk), label=row.user.get_username()),
        user_id=row.user.pk,
        credential=Credential(
            kind=CredentialKind.OAUTH_TOKEN, id=str(row.pk), fingerprint=fingerprint(checksum)
        ),
        resource=attempt.audience,
        instance=settings.HEYAIRA_INSTANCE,
        request_id=attempt.request_id,
        client_id=client_id or None,
    )


# The token, its user, project and client, and the user's current role there.
_TOKEN_BY_CHECKSUM = CompiledSelect(
    lambda checksum: (
        AccessToken.objects.select_related("user", "project", "application")
        .annotate(role=role_subquery())
        .filter(token_checksum=checksum)
        .order_by("pk")[:1]
    ),
    "checksum",
)


def _api_key_caller(secret: str, attempt: _Attempt) -> Caller:
    found = api_key_and_role(secret)  # one query: the key, its user, project and role
    if found is None:
        attempt.fail("invalid_api_key", "The API key is unknown.")
    key, role = found
    subject = _Subject(
        key.user,
        key.project,
        kind=CredentialKind.API_KEY,
        tag=fingerprint(key.prefix),
        actor=(ActorType.API_KEY, str(key.pk), _key_label(key)),
    )
    if key.revoked_at is not None:
        # A revoked key still in use is worth an auditor's look: a leaked key, or a forgotten
        # client. The row names the key, never the secret.
        attempt.fail("api_key_revoked", "The API key was revoked.", subject)
    if key.expires_at is not None and timezone.now() >= key.expires_at:
        attempt.fail("api_key_expired", "The API key has expired.", subject)
    if role is None:
        attempt.fail("not_a_member", _DESCRIPTIONS["not_a_member"], subject)
    api_key_touch(key)
    return _key_caller(key, role, attempt)


def _key_label(key: ApiKey) -> str:
    return f"{key.label} ({key.user.get_username()})"


def _key_caller(key: ApiKey, role: Role, attempt: _Attempt) -> Caller:
    return Caller(
        project=key.project,
        role=role,
        scopes=frozenset(key.scopes),
        actor=Actor(type=ActorType.API_KEY, id=str(key.pk), label=_key_label(key)),
        user_id=key.user.pk,
        credential=Credential(
            kind=CredentialKind.API_KEY, id=str(key.pk), fingerprint=fingerprint(key.prefix)
        ),
        resource=attempt.audience,
        instance=settings.HEYAIRA_INSTANCE,
        request_id=attempt.request_id,
    )


_DESCRIPTIONS = {
    "token_unbound": "The access token is not bound to a project and a resource.",
    "token_expired": "The access token has expired.",
    "wrong_audience": "The access token was issued for another resource.",
    "not_a_member": "The credential's user is no longer an active member of its project.",
}


def _resource_name(url: str) -> ResourceName:
    return "api" if url == RESOURCES["api"] else "mcp"


def _quoted(value: str) -> str:
    """A quoted-string body: backslash and quote escaped, control characters dropped."""
    cleaned = "".join(ch for ch in value if ch >= " " and ch != "\x7f")
    return cleaned.replace("\\", "\\\\").replace('"', '\\"')
