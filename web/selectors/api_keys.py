"""A project's API keys for its owners and admins: a keyset page, newest first, in one query."""

from __future__ import annotations

from core.access import Caller, Capability
from core.errors import Forbidden
from projects.models import ApiKey

KEYS_SHOWN = 100


def project_api_keys(caller: Caller) -> tuple[list[ApiKey], bool]:
    """The newest KEYS_SHOWN keys (revoked ones included, marked) and whether there are more."""
    if not caller.can(Capability.MANAGE):
        raise Forbidden("Only the project's owners and admins can see its API keys.")
    keys = list(
        ApiKey.objects.filter(project=caller.project)
        .select_related("user")
        .defer("secret_hash")
        .order_by("-created_at", "-id")[: KEYS_SHOWN + 1]
    )
    return keys[:KEYS_SHOWN], len(keys) > KEYS_SHOWN
