"""Every page makes a fixed number of SQL queries whatever the project holds: pinned here with
3 and with 300 rows of each kind (tasks, receipts, memories, summary versions, audit events,
API keys and connected apps). Each count includes the session, the user, the membership
lookup and the one statement that counts a project page's view (web.access: its reads write no
row each)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from audit.models import AuditEvent
from identity.models import AccessToken, Application, RefreshToken
from projects.models import ApiKey
from tests.factories import World
from tests.web.content import bulk

Url = Callable[[dict[str, Any]], str]

# page -> (queries with 3 rows, queries with 300 rows, its URL from the ids `fill` made). A page
# cut short counts what follows it ("and N more"): one query more when there is more, never one
# more per row.
PAGES: dict[str, tuple[int, int, Url]] = {
    "front door": (4, 4, lambda ids: "/"),
    "project picker": (4, 4, lambda ids: "/projects/"),
    "dashboard": (11, 14, lambda ids: "/projects/alpha/"),
    "dashboard, done tasks": (11, 13, lambda ids: "/projects/alpha/?status=done"),
    "task": (12, 13, lambda ids: f"/projects/alpha/tasks/{ids['task']}/"),
    "decisions and notes": (7, 8, lambda ids: "/projects/alpha/memory/"),
    "search": (7, 7, lambda ids: "/projects/alpha/memory/?q=deploy"),
    "memory": (9, 9, lambda ids: f"/projects/alpha/memory/{ids['memory']}/"),
    "running summaries": (7, 8, lambda ids: "/projects/alpha/summaries/"),
    "summary versions": (7, 7, lambda ids: "/projects/alpha/summaries/agent-0/"),
    "API keys": (7, 8, lambda ids: "/projects/alpha/keys/"),
    "connected apps": (6, 6, lambda ids: "/apps/"),
    "audit logs": (4, 4, lambda ids: "/audit/"),
    "audit list": (9, 10, lambda ids: "/audit/alpha/"),
    "audit list, filtered": (
        9,
        10,
        lambda ids: "/audit/alpha/?operation=task_get&outcome=success",
    ),
    "audit event": (9, 9, lambda ids: f"/audit/alpha/events/{ids['event']}/"),
    # The export's queries: the page's, then one per 2,000 rows streamed (audit.export).
    "audit export": (5, 5, lambda ids: "/audit/alpha/export.jsonl?operation=task_get"),
}


def fill(world: World, rows: int) -> dict[str, Any]:
    ids = bulk(world.alpha, rows)
    ApiKey.objects.bulk_create(
        ApiKey(
            project=world.alpha,
            user=world.contributor,
            label=f"k{n}",
            prefix=f"{n:012x}",
            secret_hash="0" * 64,
            scopes=["continuity:read"],
            created_by="bulk",
        )
        for n in range(rows)
    )
    soon = timezone.now() + timedelta(hours=1)
    # Public clients as Application.save() stores them (no secret, none to hash), in one
    # statement per kind rather than three per row.
    apps = Application.objects.bulk_create(
        Application(
            name=f"app {n}",
            client_id=f"client-{n}",
            client_type=Application.CLIENT_PUBLIC,
            client_secret="",
            hash_client_secret=False,
            skip_authorization=False,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="http://127.0.0.1:8765/callback",
        )
        for n in range(rows)
    )
    accesses = AccessToken.objects.bulk_create(
        AccessToken(
            user=world.owner,
            project=world.alpha,
            application=app,
            token=f"access-{n}",
            token_checksum=f"{n:064x}",
            expires=soon,
            scope="continuity:read",
        )
        for n, app in enumerate(apps)
    )
    RefreshToken.objects.bulk_create(
        RefreshToken(
            user=world.owner,
            project=world.alpha,
            application=app,
            token=f"refresh-{n}",
            token_checksum=f"{n + 100000:064x}",
            access_token=access,
        )
        for n, (app, access) in enumerate(zip(apps, accesses, strict=True))
    )
    return ids


@pytest.mark.parametrize("rows", [3, 300])
@pytest.mark.parametrize("page", list(PAGES))
def test_each_page_makes_a_fixed_number_of_queries(
    world: World, client: Client, django_assert_num_queries: Any, page: str, rows: int
):
    small, large, url = PAGES[page]
    queries = small if rows == 3 else large
    ids = fill(world, rows)
    ids["event"] = AuditEvent.objects.filter(project_id=world.alpha.pk).values_list(
        "pk", flat=True
    )[0]
    client.force_login(world.owner)
    client.get(url(ids))  # warms the per-process caches (content types for guardian)
    with django_assert_num_queries(queries):
        response = client.get(url(ids))
        streamed = getattr(response, "streaming_content", None)
        body = b"".join(streamed) if streamed is not None else response.content
    assert response.status_code == 200
    assert len(body) < 400_000  # pages are bounded too
