"""Headless Debian Chromium driven by Playwright: the person at the browser in UI tests.

Playwright's own browser downloads do not work here, so the browser is Debian's `chromium`
(`.ci/run` installs it when it is missing). Each test gets a fresh context (its own cookies),
like a new person at a new browser; the browser process itself is shared per test process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

CHROMIUM = os.environ.get("HEYAIRA_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium stalls on this closed network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def chromium_available() -> bool:
    return Path(CHROMIUM).exists()


@pytest.fixture(scope="session")
def playwright_driver() -> Iterator[Playwright]:
    if not chromium_available():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def chromium(playwright_driver: Playwright) -> Iterator[Browser]:
    # Playwright gives every launch a new, empty profile directory of its own.
    browser = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def browser_context(chromium: Browser) -> Iterator[BrowserContext]:
    context = chromium.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(browser_context: BrowserContext) -> Page:
    return browser_context.new_page()
