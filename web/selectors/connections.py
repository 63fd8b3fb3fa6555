"""The person's connected apps: which OAuth clients hold live tokens for which of their
projects, with the scopes granted and when the client last used them.

Three queries whatever the person holds: live access tokens, live refresh tokens (a client
whose access token expired is still connected while it may refresh), and the newest audit row
of each (project, client) pair for "last used".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Max
from django.utils import timezone

from audit.models import AuditEvent
from core.access import CredentialKind
from identity.models import AccessToken, RefreshToken

# More connections than this are not a person's apps but a leak; the page says it stopped.
TOKENS_READ = 500
_FIELDS = (
    "project_id",
    "project__slug",
    "project__name",
    "application__client_id",
    "application__name",
)


@dataclass
class ConnectedApp:
    project_slug: str
    project_name: str
    client_id: str
    name: str
    scopes: set[str] = field(default_factory=set)
    last_used: datetime | None = None

    @property
    def scope_list(self) -> list[str]:
        return sorted(self.scopes)


def connected_apps(user: AbstractBaseUser) -> list[ConnectedApp]:
    """By project, then app name; only the person's current memberships count."""
    now = timezone.now()
    mine = {"user_id": user.pk, "project__memberships__user_id": user.pk}
    access = AccessToken.objects.filter(**mine, expires__gt=now, application__isnull=False)
    refresh = RefreshToken.objects.filter(**mine, revoked__isnull=True, application__isnull=False)
    apps: dict[tuple[Any, str], ConnectedApp] = {}
    rows = list(access.values(*_FIELDS, "scope")[:TOKENS_READ])
    rows += list(refresh.values(*_FIELDS, "access_token__scope")[:TOKENS_READ])
    for row in rows:
        key = (row["project_id"], row["application__client_id"])
        app = apps.setdefault(
            key,
            ConnectedApp(
                project_slug=row["project__slug"],
                project_name=row["project__name"],
                client_id=row["application__client_id"],
                name=row["application__name"] or row["application__client_id"],
            ),
        )
        app.scopes.update((row.get("scope") or row.get("access_token__scope") or "").split())
    _add_last_use(user, apps)
    return sorted(apps.values(), key=lambda a: (a.project_name, a.project_slug, a.name.lower()))


def _add_last_use(user: AbstractBaseUser, apps: dict[tuple[Any, str], ConnectedApp]) -> None:
    if not apps:
        return
    used = (
        AuditEvent.objects.filter(
            user_id=user.pk,
            credential_kind=CredentialKind.OAUTH_TOKEN,
            project_id__in={project for project, _ in apps},
            client_id__in={client for _, client in apps},
        )
        .values("project_id", "client_id")
        .annotate(last=Max("occurred_at"))
        .order_by()
    )
    for row in used:
        app = apps.get((row["project_id"], row["client_id"]))
        if app is not None:
            app.last_used = row["last"]
