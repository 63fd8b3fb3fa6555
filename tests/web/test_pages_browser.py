"""Every page of the web UI in headless Chromium at 1280x800 and 390x844, with 30 tasks (some
waiting on others, receipts with passed and failed tests) and decisions, notes and a summary in
Markdown: it fits the window, every word is whole (measured word by word as laid out), axe-core
finds no serious or critical violation (contrast included), every control has an accessible
name, the landmarks are there, and a screenshot is taken. On the phone the dashboard is at most
two screens tall per ten tasks.

With HEYAIRA_SCREENSHOTS=docs/screenshots the screenshots refresh the committed ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.browser import PHONE
from tests.live import LiveServer, start_live_server, stop_live_server
from tests.web.browsing import (
    PASSWORD,
    VIEWPORTS,
    axe_violations,
    open_page,
    require_axe,
    screenshot_directory,
    sign_in,
    split_words,
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
from tests.web.content import busy_story, story_as
User = get_user_model()
alpha = Project.objects.get(slug="alpha")
bind_repository(alpha)
olivia, carla = User.objects.get(username="olivia"), User.objects.get(username="carla")
ids = story_as(token_caller(carla, alpha))
busy = busy_story(token_caller(carla, alpha), tasks=29)  # 30 tasks with the story's
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
result = {**ids, "event": str(event.pk), "waiting": busy["tasks"][4], "tested": busy["tasks"][3],
          "decision": busy["old"]}
"""

PAGES: dict[str, str] = {
    "front-door": "/",
    "projects": "/projects/",
    "dashboard": "/projects/alpha/",
    "dashboard-done": "/projects/alpha/?status=done",
    "task": "/projects/alpha/tasks/{task}/",
    "task-waiting": "/projects/alpha/tasks/{waiting}/",
    "task-tests": "/projects/alpha/tasks/{tested}/",
    "memory-list": "/projects/alpha/memory/",
    "memory-search": "/projects/alpha/memory/?q=templates",
    "memory": "/projects/alpha/memory/{decision}/",
    "summaries": "/projects/alpha/summaries/",
    "summary-versions": "/projects/alpha/summaries/claude-code/",
    "api-keys": "/projects/alpha/keys/",
    "connected-apps": "/apps/",
    "audit-projects": "/audit/",
    "audit-list": "/audit/alpha/?operation=task_update",
    "audit-list-wrong-filter": "/audit/alpha/?since=yesterday&outcome=weird",
    "audit-event": "/audit/alpha/events/{event}/",
}


def _ask_to_revoke_the_key(page: Page) -> None:
    page.get_by_role("button", name="Revoke the key ci runner").press("Enter")


def _ask_to_disconnect_the_app(page: Page) -> None:
    page.get_by_role("button", name="Disconnect Claude Code from Alpha").press("Enter")


# The confirmation pages answer a POST: each is reached from its list by its button.
CONFIRMATIONS: dict[str, tuple[str, Callable[[Page], None]]] = {
    "confirm-revoke-key": ("/projects/alpha/keys/", _ask_to_revoke_the_key),
    "confirm-disconnect-app": ("/apps/", _ask_to_disconnect_the_app),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Iterator[LiveServer]:
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


def _problems(page: Page, name: str, axe: str) -> list[str]:
    """Everything wrong with the page as shown, each named."""
    problems = []
    for landmark in ("banner", "main", "contentinfo"):
        if page.get_by_role(landmark).count() != 1:
            problems.append(f"{name}: not one {landmark} landmark")
    if page.get_by_role("heading", level=1).count() != 1:
        problems.append(f"{name}: not one h1")
    problems += [f"{name}: unnamed control {c}" for c in unnamed_controls(page)]
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    if overflow > 0:
        problems.append(f"{name}: {overflow}px wider than the window")
    split = split_words(page)
    if split:
        problems.append(f"{name}: {len(split)} words broken across lines: {split[:12]}")
    problems += [f"{name}: axe {violation}" for violation in axe_violations(page, axe)]
    return problems


@pytest.mark.parametrize("size", VIEWPORTS)
def test_every_page_reads_whole_words_passes_axe_and_is_photographed(
    server: LiveServer, ids: dict[str, Any], chromium: Browser, tmp_path: Path, size: str
):
    axe = require_axe()
    directory = screenshot_directory(tmp_path)
    page = open_page(chromium, VIEWPORTS[size])
    sign_in(page, server, "olivia")
    problems: list[str] = []
    for name, path in PAGES.items():
        response = page.goto(f"{server.url}{path.format(**ids)}")
        assert response is not None
        expected = 400 if name == "audit-list-wrong-filter" else 200
        assert response.status == expected, name
        problems += _problems(page, name, axe)
        page.screenshot(path=directory / f"web-{name}-{size}.png", full_page=True)
    for name, (path, ask) in CONFIRMATIONS.items():
        page.goto(f"{server.url}{path}")
        with page.expect_navigation():
            ask(page)
        assert page.get_by_role("button", name="Cancel").count() == 0  # Cancel is a link
        assert page.get_by_role("link", name="Cancel").count() == 1, name
        problems += _problems(page, name, axe)
        page.screenshot(path=directory / f"web-{name}-{size}.png", full_page=True)
    page.context.close()
    assert problems == [], "\n".join(problems)


def test_the_phone_dashboard_is_at_most_two_screens_per_ten_tasks(
    server: LiveServer, ids: dict[str, Any], chromium: Browser
):
    page = open_page(chromium, PHONE)
    sign_in(page, server, "olivia")
    for path in ("/projects/alpha/", "/projects/alpha/?status=all"):
        page.goto(f"{server.url}{path}")
        tasks = page.get_by_role("region", name="tasks", exact=False).locator("tbody tr").count()
        height = page.evaluate("document.documentElement.scrollHeight")
        screens = height / PHONE["height"]
        assert tasks >= 20, path
        # e.g. 25 tasks: at most 5 screens (4,220 px) for the whole page, header to footer.
        assert screens <= 2 * tasks / 10, f"{path}: {height}px for {tasks} tasks"
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
        '- navigation "Task status"',
        '- link "Done (2)"',
        '- link "Ship the dashboard"',
        "to do waiting on 2 tasks",
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
