"""Client registration that costs little and cannot grow the database without bound.

Both ways a client comes to exist, RFC 7591 dynamic registration and a client ID metadata
document seen for the first time (identity.cimd), pass the same two limits:
- per network: HEYAIRA_DCR_RATE_LIMIT_PER_HOUR, counted in the cache (identity.ratelimit);
- overall: at most HEYAIRA_UNUSED_CLIENTS_MAX registered clients that never obtained a token.
  Those are removed HEYAIRA_UNUSED_CLIENT_HOURS after registration (`manage.py purge_oauth`,
  and here, on the way, when the cap is reached).

Dynamic registration itself is written here rather than left to DOT's view, for cost: a public
client gets no secret (nothing to hash), and a confidential client's secret is PBKDF2-hashed
before the request takes a database connection. DOT hashed it inside its transaction, so
simultaneous registrations held pooled connections for a third of a second of CPU each and
the ones waiting behind them timed out (503).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.generators import generate_client_id, generate_client_secret
from oauth2_provider.models import set_token_value
from oauth2_provider.settings import oauth2_settings

from audit.models import Outcome
from identity import audit, ratelimit
from identity.models import AccessToken, Application
from identity.policy import redirect_uri_problems

REGISTRATION_WINDOW_SECONDS = 3600
# Never-used clients removed per pass when the cap is reached: enough to make room, small
# enough that the registration which triggers it stays quick.
PURGE_BATCH = 200
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
MAX_CLIENT_NAME = 255
REGISTERED_SOURCES = (Application.RegistrationSource.DCR, Application.RegistrationSource.CIMD)


@dataclass(frozen=True)
class Refusal:
    """A registration refused for a limit: answered 429 with Retry-After."""

    code: str  # rate_limited | registration_cap
    description: str
    retry_after: int
    first_of_window: bool = False  # the per-network limit's first refusal of its window


class MetadataError(Exception):
    """RFC 7591 section 3.2.2: invalid_client_metadata or invalid_redirect_uri."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


# ---- limits -------------------------------------------------------------------------------


def admit_network(address: str) -> Refusal | None:
    """Count one registration from this client's network; a refusal past the hourly limit."""
    hit = ratelimit.hit(
        "dcr",
        address,
        limit=settings.HEYAIRA_DCR_RATE_LIMIT_PER_HOUR,
        window=REGISTRATION_WINDOW_SECONDS,
    )
    if hit.allowed:
        return None
    return Refusal(
        "rate_limited",
        "Too many client registrations from this network; retry later.",
        hit.retry_after,
        first_of_window=hit.first_refusal,
    )


def unused_clients() -> QuerySet[Application]:
    """Registered clients (DCR or CIMD) that never obtained a token."""
    return Application.objects.filter(
        first_token_at__isnull=True, registration_source__in=REGISTERED_SOURCES
    )


def admit_growth() -> Refusal | None:
    """The overall cap on never-used clients: stale ones are purged first to make room.

    A bounded count (LIMIT cap), so its cost does not grow with the table. Concurrent
    registrations may each see room and overshoot the cap by their number; it bounds growth,
    it is not a quota."""
    cap = settings.HEYAIRA_UNUSED_CLIENTS_MAX
    if _count_up_to(cap) < cap:
        return None
    purge_unused(limit=PURGE_BATCH)
    if _count_up_to(cap) < cap:
        return None
    oldest = unused_clients().order_by("created").values_list("created", flat=True).first()
    lifetime = timedelta(hours=settings.HEYAIRA_UNUSED_CLIENT_HOURS)
    wait = (oldest + lifetime - timezone.now()).total_seconds() if oldest else 60
    return Refusal(
        "registration_cap",
        "This server holds as many new, unused client registrations as it accepts; retry later.",
        max(60, int(wait)),
    )


def _count_up_to(cap: int) -> int:
    return unused_clients().values("pk")[:cap].count()


def purge_unused(*, limit: int | None = None) -> int:
    """Delete never-used clients registered longer ago than HEYAIRA_UNUSED_CLIENT_HOURS (their
    pending codes and registration tokens go with them). Returns how many were deleted."""
    cutoff = timezone.now() - timedelta(hours=settings.HEYAIRA_UNUSED_CLIENT_HOURS)
    stale = unused_clients().filter(created__lt=cutoff).order_by("created")
    deleted = 0
    while limit is None or deleted < limit:
        batch = PURGE_BATCH if limit is None else min(PURGE_BATCH, limit - deleted)
        ids = list(stale.values_list("pk", flat=True)[:batch])
        if not ids:
            break
        # The WHERE is repeated: a client that obtained its first token meanwhile stays.
        with transaction.atomic():
            unused_clients().filter(pk__in=ids, created__lt=cutoff).delete()
        deleted += len(ids)
    return deleted


def mark_used(application: Application) -> None:
    """The client obtained a token: it is no longer a candidate for removal."""
    if application.first_token_at is None:
        now = timezone.now()
        Application.objects.filter(pk=application.pk, first_token_at__isnull=True).update(
            first_token_at=now
        )
        application.first_token_at = now


# ---- RFC 7591 dynamic registration ----------------------------------------------------------


@dataclass(frozen=True)
class Registration:
    """A client about to be registered: built and checked before any database work."""

    application: Application
    auth_method: str
    secret: str  # the confidential client's secret, shown once; "" for public clients


def prepare(body: bytes) -> Registration:
    """Parse and check RFC 7591 metadata, and hash a confidential client's secret.

    Touches no database: the hash (PBKDF2, a third of a second) must not hold a connection."""
    metadata = _parse(body)
    uris = _redirect_uris(metadata)
    auth_method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
    if auth_method not in AUTH_METHODS:
        raise MetadataError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}",
        )
    _check_grants(metadata)
    public = auth_method == "none"
    secret = "" if public else generate_client_secret()
    application = Application(
        client_id=generate_client_id(),
        name=_client_name(metadata),
        redirect_uris=" ".join(uris),
        client_type=Application.CLIENT_PUBLIC if public else Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        registration_source=Application.RegistrationSource.DCR,
        client_secret=secret,
    )
    try:
        # The id is fresh and random, and checking it would take a connection now.
        application.full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        raise MetadataError("invalid_client_metadata", "; ".join(error.messages)) from None
    if secret:
        application.client_secret = make_password(
            secret, hasher=oauth2_settings.CLIENT_SECRET_HASHER
        )
    return Registration(application, auth_method, secret)


def register(registration: Registration, *, request_id: str) -> dict[str, Any]:
    """Store the client and its RFC 7592 registration token, audited, in one transaction;
    returns the RFC 7591 answer (with the secrets, shown this once)."""
    application = registration.application
    token = generate_client_secret()
    with transaction.atomic():
        application.save()
        _registration_token(application, token)
        audit.record_oauth(
            audit.CLIENT_REGISTER,
            Outcome.SUCCESS,
            client_id=application.client_id,
            target_type="oauth_client",
            target_id=application.client_id,
            request_id=request_id,
        )
    return _answer(registration, token)


def _parse(body: bytes) -> dict[str, Any]:
    try:
        metadata = json.loads(body)
    except ValueError:
        raise MetadataError("invalid_client_metadata", "The body must be a JSON object") from None
    if not isinstance(metadata, dict):
        raise MetadataError("invalid_client_metadata", "The body must be a JSON object")
    return metadata


def _redirect_uris(metadata: dict[str, Any]) -> list[str]:
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise MetadataError(
            "invalid_client_metadata", "redirect_uris must be a non-empty array of strings"
        )
    problems = redirect_uri_problems(uris)
    if problems:
        raise MetadataError("invalid_redirect_uri", "; ".join(problems))
    return list(dict.fromkeys(uris))


def _check_grants(metadata: dict[str, Any]) -> None:
    grants = metadata.get("grant_types", ["authorization_code"])
    if (
        not isinstance(grants, list)
        or "authorization_code" not in grants
        or not set(grants) <= GRANT_TYPES
    ):
        raise MetadataError(
            "invalid_client_metadata",
            'grant_types: HeyAira clients use "authorization_code" (and "refresh_token") only',
        )
    responses = metadata.get("response_types", ["code"])
    if not isinstance(responses, list) or responses != ["code"]:
        raise MetadataError("invalid_client_metadata", 'response_types must be ["code"]')


def _client_name(metadata: dict[str, Any]) -> str:
    name = metadata.get("client_name", "")
    if not isinstance(name, str) or len(name) > MAX_CLIENT_NAME:
        raise MetadataError(
            "invalid_client_metadata",
            f"client_name must be a string of at most {MAX_CLIENT_NAME} characters",
        )
    return name


def _registration_token(application: Application, raw: str) -> AccessToken:
    """RFC 7592's registration access token: no project and no audience, so no resource
    accepts it (identity.policy.access_token_problem); only the management endpoint does."""
    lifetime = timedelta(seconds=oauth2_settings.DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS)
    token = AccessToken(
        application=application,
        user=None,
        expires=timezone.now() + lifetime,
        scope=oauth2_settings.DCR_REGISTRATION_SCOPE,
    )
    set_token_value(token, raw)
    token.save()
    return token


def _answer(registration: Registration, token: str) -> dict[str, Any]:
    application = registration.application
    management = reverse(
        "oauth2_provider:dcr-register-management", kwargs={"client_id": application.client_id}
    )
    answer: dict[str, Any] = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "redirect_uris": application.redirect_uris.split(),
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": registration.auth_method,
        "registration_access_token": token,
        "registration_client_uri": f"{settings.HEYAIRA_PUBLIC_URL}{management}",
    }
    if application.name:
        answer["client_name"] = application.name
    if registration.secret:
        answer["client_secret"] = registration.secret
        answer["client_secret_expires_at"] = 0  # RFC 7591: required with a secret; 0 = never
    return answer
