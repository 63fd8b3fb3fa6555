"""Temporary: clipped screenshots of pages for looking at them."""
import os
from typing import Any
import pytest
from playwright.sync_api import Browser
from tests.browser import PHONE, DESKTOP
from tests.web.browsing import open_page, sign_in
from tests.web.test_pages_browser import server, ids  # noqa: F401

pytestmark = pytest.mark.live_server
VIEW = os.environ.get("VIEW", "/projects/alpha/,/projects/alpha/?status=all")
SIZE = PHONE if os.environ.get("VIEWSIZE", "phone") == "phone" else DESKTOP

def test_view(server, ids: dict[str, Any], chromium: Browser):
    page = open_page(chromium, SIZE)
    sign_in(page, server, "olivia")
    for n, path in enumerate(VIEW.split(",")):
        page.goto(f"{server.url}{path.format(**ids)}")
        height = page.evaluate("document.documentElement.scrollHeight")
        print(path, height, page.evaluate("""() => { const t = document.querySelector('table.cards'); if (!t) return null; const r = t.getBoundingClientRect(); const rows=[...t.querySelectorAll('tbody tr')].map(x=>Math.round(x.getBoundingClientRect().height)); return [Math.round(r.top+scrollY), Math.round(r.height), rows.length, rows.join(',')]; }"""))
        for i, y in enumerate(list(range(0, min(height, 3600), 1200)) + [max(0, height - 1200)]):
            page.screenshot(path=f"/tmp/pages_view_{n}_{i}.png", full_page=True,
                            clip={"x": 0, "y": y, "width": SIZE["width"], "height": min(1200, height - y)})
