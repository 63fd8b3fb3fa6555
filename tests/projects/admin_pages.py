"""Helpers for driving /admin/ in headless Chromium as a person would."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Locator, Page

from tests.live import LiveServer

PASSWORD = "correct-horse-battery-staple-42"


def sign_in(page: Page, server: LiveServer, username: str, password: str = PASSWORD) -> None:
    """Sign in through the admin's own sign-in page, by typing and clicking."""
    page.goto(f"{server.url}/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")
    assert page.url == f"{server.url}/admin/", page.content()


def open_from_index(page: Page, server: LiveServer, model: str) -> None:
    """Click a model's link on the admin index (e.g. "Memberships")."""
    page.goto(f"{server.url}/admin/")
    rows = page.locator("#content-main tr[class^='model-']")  # not the app's own heading link
    rows.get_by_role("link", name=model, exact=True).click()


def options(select: Locator) -> list[str]:
    """The values a select offers, once the page that has it is there (evaluate_all alone
    would answer at once, for whatever page is still showing)."""
    select.wait_for(state="attached")
    values = select.locator("option").evaluate_all("found => found.map(o => o.value)")
    return [str(value) for value in values]


def shoot(page: Page, name: str, *, mask: list[Locator] | None = None) -> None:
    """Save a 1280x800 screenshot as docs/screenshots/admin-NAME.png when HEYAIRA_SCREENSHOTS
    names that folder (to refresh the committed ones); otherwise nothing is written."""
    folder = os.environ.get("HEYAIRA_SCREENSHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(folder) / f"admin-{name}.png"), mask=mask or [])
