"""The front door in headless Chromium, anonymous and signed in, at 1280x800 and 390x844.

Screenshots go to the test's temporary directory; with HEYAIRA_SCREENSHOTS=docs/screenshots
they refresh the committed ones (the server then shows the quick start's public URL).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize

from tests.browser import DESKTOP, PHONE, TIMEOUT_MS
from tests.live import REPO, LiveServer, start_live_server, stop_live_server

pytestmark = pytest.mark.live_server

PASSWORD = "correct-horse-battery-staple-42"
# What `make run` shows; the page only displays it, the browser talks to the real port.
PUBLIC_URL = "http://127.0.0.1:8000"
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Iterator[LiveServer]:
    live, pg_name = start_live_server(tmp_path_factory.mktemp("web"), public_url=PUBLIC_URL)
    live.add_person("olivia", PASSWORD, "alpha", "owner")
    live.add_person("olivia", PASSWORD, "design-notes", "owner")
    live.add_person("oscar", PASSWORD, "beta", "owner")
    live.add_person("olivia", PASSWORD, "beta", "viewer")
    live.add_person("carla", PASSWORD, "beta", "contributor")
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    chosen = os.environ.get("HEYAIRA_SCREENSHOTS")
    directory = REPO / chosen if chosen else tmp_path
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def open_page(chromium: Browser, viewport: ViewportSize) -> Page:
    context = chromium.new_context(viewport=viewport)
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


def sign_in(page: Page, server: LiveServer, username: str) -> None:
    page.goto(f"{server.url}/")
    page.get_by_role("banner").get_by_role("link", name="Sign in").click()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation(url=f"{server.url}/"):
        page.get_by_role("button", name="Sign in").click()


def assert_fits(page: Page) -> None:
    """No sideways scrolling: everything fits the viewport's width."""
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0


@pytest.mark.parametrize("size", VIEWPORTS)
def test_it_shows_an_anonymous_visitor_the_server_and_the_mcp_url(
    server: LiveServer, chromium: Browser, screenshots: Path, size: str
):
    page = open_page(chromium, VIEWPORTS[size])
    page.goto(f"{server.url}/")

    assert page.title() == "Durable state for AI agents · HeyAira"
    assert page.get_by_role("heading", level=1).inner_text() == "HeyAira"
    for landmark in ("banner", "main", "contentinfo"):
        assert page.get_by_role(landmark).count() == 1
    mcp_url = page.get_by_role("region", name="Connect your agent").locator("pre code").first
    assert mcp_url.inner_text() == f"{PUBLIC_URL}/mcp"
    assert page.get_by_role("link", name="admin", exact=True).get_attribute("href") == "/admin/"
    assert page.get_by_role("link", name=f"{PUBLIC_URL}/healthz").get_attribute("href") == (
        "/healthz"
    )
    assert_fits(page)
    page.screenshot(path=screenshots / f"front-door-anonymous-{size}.png", full_page=True)

    # A click on the URL selects all of it, ready to copy.
    mcp_url.click()
    assert page.evaluate("window.getSelection().toString().trim()") == f"{PUBLIC_URL}/mcp"
    page.context.close()


def test_it_shows_keyboard_focus_and_skips_to_the_content(server: LiveServer, chromium: Browser):
    page = open_page(chromium, DESKTOP)
    page.goto(f"{server.url}/")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    assert skip.evaluate("e => e === document.activeElement")
    outline = skip.evaluate(
        "e => getComputedStyle(e).outlineStyle + ' ' + getComputedStyle(e).outlineWidth"
    )
    assert outline == "solid 3px"
    box = skip.bounding_box()
    assert box is not None
    assert box["x"] >= 0  # on screen once focused
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Sign in"
    page.context.close()


@pytest.mark.parametrize("size", VIEWPORTS)
def test_it_shows_a_signed_in_owner_their_projects_and_roles(
    server: LiveServer, chromium: Browser, screenshots: Path, size: str
):
    page = open_page(chromium, VIEWPORTS[size])
    sign_in(page, server, "olivia")

    banner = page.get_by_role("banner")
    assert "Signed in as olivia" in banner.inner_text()
    rows = page.get_by_role("table").first.locator("tbody tr")
    assert [row.locator("td").all_inner_texts() for row in rows.all()] == [
        ["Alpha", "alpha", "Owner"],
        ["Beta", "beta", "Viewer"],
        ["Design-Notes", "design-notes", "Owner"],
    ]
    assert page.get_by_role("link", name="Open the admin").get_attribute("href") == "/admin/"
    assert_fits(page)
    page.screenshot(path=screenshots / f"front-door-signed-in-{size}.png", full_page=True)
    page.context.close()


def test_it_lands_a_contributor_on_the_front_door_without_the_admin(
    server: LiveServer, chromium: Browser
):
    page = open_page(chromium, DESKTOP)
    sign_in(page, server, "carla")

    rows = page.get_by_role("table").first.locator("tbody tr")
    assert [row.locator("td").all_inner_texts() for row in rows.all()] == [
        ["Beta", "beta", "Contributor"]
    ]
    assert page.get_by_role("link", name="Open the admin").count() == 0
    assert page.get_by_role("banner").get_by_role("link", name="Admin").count() == 0

    page.get_by_role("main").get_by_role("button", name="Sign out").click()
    page.get_by_role("main").get_by_role("link", name="Sign in").wait_for()
    assert page.url == f"{server.url}/"
    assert "Signed in as" not in page.get_by_role("banner").inner_text()
    page.context.close()
