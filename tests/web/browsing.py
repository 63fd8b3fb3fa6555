"""The person at headless Chromium for the web UI's journeys: pages, sign-in (by mouse or by
keyboard alone), the fit, label, whole-word and axe-core checks, and where screenshots go."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, ViewportSize

from tests.browser import DESKTOP, PHONE, TIMEOUT_MS
from tests.live import REPO, LiveServer

PASSWORD = "correct-horse-battery-staple-42"
VIEWPORTS: dict[str, ViewportSize] = {"desktop": DESKTOP, "phone": PHONE}
# Roles of controls a person operates: each must have an accessible name.
CONTROL_ROLES = "textbox|searchbox|combobox|listbox|button|checkbox|radio|spinbutton|link"
_UNNAMED = re.compile(rf"^\s*- ({CONTROL_ROLES})(\s*\[[^\]]*\])?:?\s*$")


def screenshot_directory(tmp_path: Path) -> Path:
    """The test's temporary directory; HEYAIRA_SCREENSHOTS=docs/screenshots refreshes the
    committed ones."""
    chosen = os.environ.get("HEYAIRA_SCREENSHOTS")
    directory = REPO / chosen if chosen else tmp_path
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def open_page(chromium: Browser, viewport: ViewportSize = DESKTOP) -> Page:
    context = chromium.new_context(viewport=viewport, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


def sign_in(page: Page, server: LiveServer, username: str, then: str = "/") -> None:
    page.goto(f"{server.url}/accounts/login/?next={then}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation(url=f"{server.url}{then}"):
        page.get_by_role("button", name="Sign in").click()


def tab_to(page: Page, target: Locator, presses: int = 80) -> None:
    """Press Tab until `target` has the focus, as a keyboard-only person would."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if target.evaluate("e => e === document.activeElement"):
            return
    raise AssertionError(f"Tab never reached {target}")


def assert_fits(page: Page) -> None:
    """No sideways scrolling of the page itself: everything fits the viewport's width (wide
    tables scroll inside their own region)."""
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{page.url} is {overflow}px wider than the window"


def unnamed_controls(page: Page) -> list[str]:
    """Controls without an accessible name, from the browser's accessibility tree, and form
    fields without a label element or aria label, from the DOM."""
    tree = page.locator("body").aria_snapshot()
    unnamed = [line.strip() for line in tree.splitlines() if _UNNAMED.match(line)]
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
            .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                         && !e.getAttribute('aria-labelledby'))
            .map(e => e.outerHTML)"""
    )
    return unnamed + list(unlabelled)


# Every run of letters and digits in a visible text node, measured as the browser laid it out:
# a word whose Range has more than one line box was split across lines. Runs longer than
# TOKEN_CHARS are tokens (hashes, ids), and so is anything inside `.token` or a `pre` block:
# those may wrap.
TOKEN_CHARS = 30
_SPLIT_WORDS = """(tokenChars) => {
  const split = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest('.token, pre, script, style')) continue;
    for (const match of node.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
      if (match[0].length > tokenChars) continue;
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()]
        .filter(r => r.width > 0 && r.height > 0).map(r => Math.round(r.top)));
      if (lines.size > 1) split.push(match[0]);
    }
  }
  return split;
}"""


def split_words(page: Page) -> list[str]:
    """The words the page shows broken across two or more lines."""
    return list(page.evaluate(_SPLIT_WORDS, TOKEN_CHARS))


AXE = REPO / ".tools" / "web-tools" / "node_modules" / "axe-core" / "axe.min.js"
# axe-core's impacts that fail a page (moderate and minor ones are listed, not failed).
FAILING_IMPACTS = ("serious", "critical")
_AXE_RUN = """async (impacts) => {
  const found = await axe.run(document, {resultTypes: ['violations']});
  const where = v => v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; ');
  return found.violations.filter(v => impacts.includes(v.impact))
    .map(v => `${v.impact} ${v.id}: ${v.help} (${where(v)})`);
}"""


def require_axe() -> str:
    """axe-core's source (`make web-tools` installs it); skipped without it, except in CI."""
    if not AXE.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{AXE} is missing: .ci/run installs it (make web-tools)")
        pytest.skip(f"{AXE} is missing: run `make web-tools`")
    return AXE.read_text()


def axe_violations(page: Page, axe_source: str) -> list[str]:
    """axe-core's serious and critical violations on the page as shown. The source is run by
    the driver, as the browser's own tools run code: the page's CSP still holds for the page."""
    page.evaluate(f"{axe_source}\n;0")
    return list(page.evaluate(_AXE_RUN, list(FAILING_IMPACTS)))
