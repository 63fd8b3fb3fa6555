"""Every page of the web UI in headless Chromium at 1280x800 and 390x844: it fits the window
(wide tables scroll in their own region), every control has an accessible name in the
browser's accessibility tree, the landmarks are there, and a screenshot is taken.

With HEYAIRA_SCREENSHOTS=docs/screenshots the screenshots refresh the committed ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.live import LiveServer, start_live_server, stop_live_server
from tests.web.browsing import (
    PASSWORD,
    VIEWPORTS,
    assert_fits,
    open_page,
    screenshot_directory,
    sign_in,
    unnamed_controls,
)

pytestmark = pytest.mark.live_server

PUBLIC_URL = "http://127.0.0.1:8000"  # what `make run` shows; the browser uses the real port
SEED = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from audit.models import AuditEvent
from identity.models import AccessToken, Application, RefreshToken
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import Project
from tests.factories import bind_repository, token_caller
from tests.web.content import story_as
User = get_user_model()
alpha = Project.objects.get(slug="alpha")
bind_repository(alpha)
olivia, carla = User.objects.get(username="olivia"), User.objects.get(username="carla")
ids = story_as(token_caller(carla, alpha))
api_key_create(operator_caller(alpha), user_id=carla.pk, label="ci runner",
               scopes=["continuity:read"], expires_days=90)
app = Application.objects.create(
    name="Claude Code", client_id="claude-code-demo", client_type="public",
    authorization_grant_type="authorization-code", redirect_uris="http://127.0.0.1:8765/cb")
access = AccessToken.objects.create(
    user=olivia, project=alpha, application=app, token="demo", token_checksum="0" * 64,
    expires=timezone.now() + timedelta(hours=1), scope="continuity:read continuity:write")
RefreshToken.objects.create(user=olivia, project=alpha, application=app, token="demo-r",
                            token_checksum="1" * 64, access_token=access)
event = AuditEvent.objects.filter(project_id=alpha.pk, operation="task_update").first()
result = {**ids, "event": str(event.pk)}
"""

PAGES: dict[str, str] = {
    "front-door": "/",
    "projects": "/projects/",
    "dashboard": "/projects/alpha/",
    "task": "/projects/alpha/tasks/{task}/",
    "memory-list": "/projects/alpha/memory/",
    "memory-search": "/projects/alpha/memory/?q=templates",
    "memory": "/projects/alpha/memory/{old}/",
    "summaries": "/projects/alpha/summaries/",
    "summary-versions": "/projects/alpha/summaries/codex/",
    "api-keys": "/projects/alpha/keys/",
    "connected-apps": "/apps/",
    "audit-projects": "/audit/",
    "audit-list": "/audit/alpha/?operation=task_update",
    "audit-event": "/audit/alpha/events/{event}/",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live, pg_name = start_live_server(tmp_path_factory.mktemp("web-pages"), public_url=PUBLIC_URL)
    live.add_person("olivia", PASSWORD, "alpha", "owner")
    live.add_person("olivia", PASSWORD, "design-notes", "owner")
    live.add_person("carla", PASSWORD, "alpha", "contributor")
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


@pytest.fixture(scope="module")
def ids(server: LiveServer) -> dict[str, Any]:
    return dict(server.run_python(SEED))


@pytest.mark.parametrize("size", VIEWPORTS)
def test_every_page_fits_names_its_controls_and_is_photographed(
    server: LiveServer, ids: dict[str, Any], chromium: Browser, tmp_path: Path, size: str
):
    directory = screenshot_directory(tmp_path)
    page = open_page(chromium, VIEWPORTS[size])
    sign_in(page, server, "olivia")
    for name, path in PAGES.items():
        response = page.goto(f"{server.url}{path.format(**ids)}")
        assert response is not None
        assert response.status == 200, name
        for landmark in ("banner", "main", "contentinfo"):
            assert page.get_by_role(landmark).count() == 1, name
        assert page.get_by_role("heading", level=1).count() == 1, name
        assert unnamed_controls(page) == [], name
        assert_fits(page)
        page.screenshot(path=directory / f"web-{name}-{size}.png", full_page=True)
    page.context.close()


def test_the_dashboards_accessibility_tree_reads_as_a_page(
    server: LiveServer, ids: dict[str, Any], chromium: Browser
):
    page = open_page(chromium)
    sign_in(page, server, "olivia")
    page.goto(f"{server.url}/projects/alpha/")
    tree = page.get_by_role("main").aria_snapshot()
    for line in (
        '- heading "Alpha" [level=1]',
        '- navigation "Project"',
        '- link "Decisions and notes"',
        '- heading "Open tasks" [level=2]',
        '- link "Ship the dashboard"',
        '- searchbox "Search decisions and notes"',
        '- button "Search"',
        '- heading "Running summaries" [level=2]',
        '- link "codex"',
    ):
        assert line in tree, f"{line!r} not in\n{tree}"
    audit = page.goto(f"{server.url}/audit/alpha/")
    assert audit is not None
    form = page.get_by_role("main").aria_snapshot()
    for name in ("From (UTC)", "Until (UTC)", "Actor", "Operation", "Outcome", "Error code"):
        assert f'"{name}"' in form, name
    page.context.close()
