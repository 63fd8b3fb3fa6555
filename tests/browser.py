"""Headless Debian Chromium driven by Playwright: the person at the browser in UI tests.

Playwright's own browser downloads do not work here, so the browser is Debian's `chromium`
(`.ci/run` installs it when it is missing). Each test gets a fresh context (its own cookies),
like a new person at a new browser.

Two APIs:
- sync tests use the fixtures `chromium`, `browser_context` and `page`;
- code that runs inside an event loop (the MCP SDK's OAuthClientProvider handlers are async)
  uses `async with async_browser_context() as context:` from the same executable and flags.

The sync driver keeps an event loop marked as running in its thread for as long as it is open,
and `anyio.run` / `asyncio.run` refuse to start under it. So the sync browser lives for one test
module, not the whole session: tests in other modules that run their own event loop are safe.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext as AsyncBrowserContext
from playwright.async_api import async_playwright
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    ViewportSize,
    sync_playwright,
)

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
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
TIMEOUT_MS = 15_000


def chromium_available() -> bool:
    return Path(CHROMIUM).exists()


def require_chromium() -> None:
    """Skip (fail in CI) when Debian's chromium is not installed."""
    if not chromium_available():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def playwright_driver(live_processes: None) -> Iterator[Playwright]:
    require_chromium()
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
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
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(browser_context: BrowserContext) -> Page:
    return browser_context.new_page()


@asynccontextmanager
async def async_browser_context(
    viewport: ViewportSize = DESKTOP,
) -> AsyncIterator[AsyncBrowserContext]:
    """A fresh Chromium (async API) and one new context in it, closed on exit."""
    require_chromium()
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport=viewport)
            context.set_default_timeout(TIMEOUT_MS)
            yield context
        finally:
            await browser.close()
