"""Audit events of the authorization server, and the per-request notes that feed them.

oauthlib hands our views only (headers, body, status), so what the validator learns on the way
(the grant's project and user, why a code was refused) is noted in a context variable that the
view opened for this request. A context variable is per thread and per task, so concurrent
requests never see each other's notes (the validator instance itself is shared).

Nothing secret is ever recorded: no tokens, codes, verifiers, client secrets or bodies.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from audit.models import Outcome
from audit.recorder import SecurityContext, record_security_event
from core.access import ActorType
from projects.models import Project

SIGN_IN = "sign_in"
CSRF_REJECTED = "csrf_rejected"
AUTHORIZE = "oauth_authorize"
CONSENT = "oauth_consent"
CLIENT_REGISTER = "oauth_client_register"
CLIENT_METADATA_REFRESH = "oauth_client_metadata_refresh"
CODE_EXCHANGE = "oauth_code_exchange"
TOKEN_REFRESH = "oauth_token_refresh"  # noqa: S105 (operation names)
TOKEN_OTHER_GRANT = "oauth_token"  # noqa: S105
CODE_REPLAY = "oauth_code_replay"
REFRESH_REUSE = "oauth_refresh_reuse"
AUTHENTICATE = "authenticate"
CREDENTIALS_REVOKED = "credentials_revoked"

TOKEN_OPERATIONS = {"authorization_code": CODE_EXCHANGE, "refresh_token": TOKEN_REFRESH}


@dataclass
class RequestNotes:
    request_id: str = ""
    project: Project | None = None
    user: Any = None
    reason: str = ""  # a more precise error code than oauthlib's, when the validator knows one
    pkce_checked: bool = False
    # A client ID metadata document fetched for this request ("first_seen" or "refreshed"),
    # and why it was refused, if it was (identity.cimd).
    cimd_fetch: str = ""
    cimd_refusal: str = ""


_notes: ContextVar[RequestNotes | None] = ContextVar("heyaira_oauth_notes", default=None)


@contextmanager
def noting(request_id: str) -> Iterator[RequestNotes]:
    notes = RequestNotes(request_id=request_id)
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def current_notes() -> RequestNotes:
    """This request's notes; a throwaway when no view opened any (a shell, a test)."""
    return _notes.get() or RequestNotes()


def note(**values: Any) -> None:
    notes = _notes.get()
    if notes is None:
        return
    for name, value in values.items():
        if name in ("reason", "cimd_refusal") and getattr(notes, name):
            continue  # the first reason found is the real one
        setattr(notes, name, value)


def _actor(user: Any, client_id: str) -> tuple[ActorType, str, str]:
    if user is not None:
        return (ActorType.USER, str(user.pk), user.get_username())
    if client_id:
        return (ActorType.OAUTH_CLIENT, client_id, "")
    return (ActorType.ANONYMOUS, "", "")


def record_oauth(
    operation: str,
    outcome: Outcome,
    *,
    user: Any = None,
    project: Project | None = None,
    client_id: str = "",
    resource: str = "",
    target_type: str = "",
    target_id: str = "",
    error_code: str = "",
    credential_kind: str = "",
    fingerprint: str = "",
    request_id: str | None = None,
    actor: tuple[ActorType, str, str] | None = None,
) -> None:
    """One audit row for a security event that has no Caller (OAuth flows, sign-in)."""
    actor = actor or _actor(user, client_id)
    context = SecurityContext(
        actor_type=actor[0],
        actor_id=actor[1],
        actor_label=actor[2],
        user_id=int(user.pk) if user is not None else None,
        client_id=client_id,
        request_id=current_notes().request_id if request_id is None else request_id,
        resource=resource,
        instance=settings.HEYAIRA_INSTANCE,
        credential_kind=credential_kind,
        credential_fingerprint=fingerprint,
    )
    record_security_event(
        operation,
        outcome,
        context,
        project=project,
        target_type=target_type,
        target_id=target_id,
        error_code=error_code[:32],
    )
