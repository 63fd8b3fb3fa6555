"""A project's API keys for its owners and admins: a page newest first, and one key by id."""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet

from core.access import Caller, Capability
from core.errors import Forbidden
from projects.models import ApiKey

KEYS_SHOWN = 100


def project_api_keys(caller: Caller) -> tuple[list[ApiKey], int]:
    """The newest KEYS_SHOWN keys (revoked ones included, marked) and how many more there are."""
    keys = list(_keys(caller).select_related("user")[: KEYS_SHOWN + 1])
    more = _keys(caller).count() - KEYS_SHOWN if len(keys) > KEYS_SHOWN else 0
    return keys[:KEYS_SHOWN], more


def project_api_key(caller: Caller, key_id: UUID) -> ApiKey | None:
    return _keys(caller).filter(pk=key_id).first()


def _keys(caller: Caller) -> QuerySet[ApiKey]:
    if not caller.can(Capability.MANAGE):
        raise Forbidden("Only the project's owners and admins can see its API keys.")
    return (
        ApiKey.objects.filter(project=caller.project)
        .defer("secret_hash")
        .order_by("-created_at", "-id")
    )
