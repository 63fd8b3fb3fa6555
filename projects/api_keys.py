"""Project API keys: create, revoke, and find the key behind a presented secret.

A key is `hak_<12 hex prefix>_<43 characters>`: 256 random bits after a public prefix that finds
the row. The stored value is HMAC-SHA256(HEYAIRA_API_KEY_PEPPER, key): a database dump alone
cannot be turned into working keys, and rotating SECRET_KEY voids none. A plain keyed hash is
enough here (no slow KDF) because the secret is random, not chosen by a person.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Literal

from django.conf import settings
from django.db import router
from django.db.models import Q
from django.utils import timezone
from pydantic import Field, StrictInt

from audit.recorder import AuditNote
from core.access import Caller, Capability, Role, privileged, scopes_for_role
from core.errors import NotFound, ValidationError
from core.lookups import project_object
from core.operations import operation
from core.statements import CompiledSelect
from core.validation import Input, RequiredText
from projects.models import ApiKey
from projects.roles import active_role, member_role, role_subquery

API_KEY_PREFIX = "hak_"
_KEY_PATTERN = re.compile(r"^hak_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
# last_used_at is a hint for people, not a log: write it at most this often per key.
LAST_USED_RESOLUTION = timedelta(minutes=1)

ScopeName = Literal["continuity:read", "continuity:write", "audit:read"]


class ApiKeyCreateInput(Input):
    user_id: StrictInt
    label: Annotated[RequiredText, Field(max_length=100)]
    scopes: Annotated[list[ScopeName], Field(min_length=1, max_length=3)]
    expires_days: Annotated[int, Field(ge=1, le=3650)] | None = None


class ApiKeyRevokeInput(Input):
    api_key_id: uuid.UUID


@dataclass(frozen=True)
class IssuedApiKey:
    api_key: ApiKey
    secret: str  # shown once, to the person who created the key; never stored or logged


@operation("api_key_create", capability=Capability.MANAGE, input_model=ApiKeyCreateInput)
def api_key_create(caller: Caller, args: ApiKeyCreateInput, note: AuditNote) -> IssuedApiKey:
    """A key for a member of the caller's project. Admins make keys for themselves and for
    viewers and contributors; a key acting for an admin or owner needs an owner (or operator)."""
    role = member_role(project_id=caller.project.pk, user_id=args.user_id)
    if role is None:
        raise NotFound("No such active member in this project.")
    if privileged(role) and args.user_id != caller.user_id:
        caller.require(Capability.OWN)
    scopes = sorted(set(args.scopes))
    excess = set(scopes) - {str(scope) for scope in scopes_for_role(role)}
    if excess:
        raise ValidationError(
            fields={"scopes": f"the {role} role does not allow {', '.join(sorted(excess))}"}
        )
    prefix = secrets.token_hex(6)
    secret = f"{API_KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    key = ApiKey.objects.create(
        project=caller.project,
        user_id=args.user_id,
        label=args.label,
        prefix=prefix,
        secret_hash=key_digest(secret),
        scopes=scopes,
        expires_at=timezone.now() + timedelta(days=args.expires_days)
        if args.expires_days
        else None,
        created_by=caller.actor.label[:150],
    )
    note.target("api_key", key.pk)
    return IssuedApiKey(api_key=key, secret=secret)


@operation("api_key_revoke", capability=Capability.MANAGE, input_model=ApiKeyRevokeInput)
def api_key_revoke(caller: Caller, args: ApiKeyRevokeInput, note: AuditNote) -> ApiKey:
    """Revoke at once; revoking a revoked key changes nothing (its first revocation stands)."""
    note.target("api_key", args.api_key_id)
    key = project_object(
        ApiKey, caller, args.api_key_id, missing="No such API key in this project."
    )
    # compare-and-set: the first revocation's time is the one kept
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db(fields=["revoked_at"])
    return key


def key_digest(secret: str) -> str:
    pepper = settings.HEYAIRA_API_KEY_PEPPER.encode()
    return hmac.new(pepper, secret.encode(), hashlib.sha256).hexdigest()


def looks_like_api_key(value: str) -> bool:
    return value.startswith(API_KEY_PREFIX)


def api_key_prefix(secret: str) -> str | None:
    """The public prefix of a well-formed key (what audit fingerprints name), unchecked."""
    match = _KEY_PATTERN.match(secret)
    return match.group(1) if match else None


def api_key_find(secret: str) -> ApiKey | None:
    """The key this secret opens, revoked and expired ones included (the caller decides), or
    None. The HMAC is compared in constant time; the prefix alone opens nothing."""
    found = api_key_and_role(secret)
    return found[0] if found else None


_KEY_BY_PREFIX = CompiledSelect(
    lambda prefix: (
        ApiKey.objects.select_related("user", "project")
        .annotate(role=role_subquery())
        .filter(prefix=prefix)
        .order_by("pk")[:1]
    ),
    "prefix",
)


def api_key_and_role(secret: str) -> tuple[ApiKey, Role | None] | None:
    """api_key_find's key with its user's current role in its project (None when they are no
    longer a member or the account is deactivated), in one query: what authentication needs.
    Nothing is cached, so a revocation or a membership change counts from the next request."""
    match = _KEY_PATTERN.match(secret)
    if match is None:
        return None
    # From the primary: a revocation must count on the very next request.
    key = _KEY_BY_PREFIX.first(router.db_for_write(ApiKey), prefix=match.group(1))
    if key is None or not hmac.compare_digest(key.secret_hash, key_digest(secret)):
        return None
    role = getattr(key, "role", None)  # the annotation (role_subquery)
    return key, active_role(role, user_is_active=key.user.is_active)


def api_key_touch(key: ApiKey) -> None:
    """Record use, at most once per LAST_USED_RESOLUTION: no write on every request."""
    now = timezone.now()
    if key.last_used_at is not None and now - key.last_used_at < LAST_USED_RESOLUTION:
        return
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ApiKey.objects.filter(stale, pk=key.pk).update(last_used_at=now)
    key.last_used_at = now


def api_keys_revoke_for_member(*, user_id: int, project_id: uuid.UUID | None = None) -> int:
    """Revoke a member's live keys in one project (or all projects): membership ended."""
    keys = ApiKey.objects.filter(user_id=user_id, revoked_at__isnull=True)
    if project_id is not None:
        keys = keys.filter(project_id=project_id)
    return keys.update(revoked_at=timezone.now())
