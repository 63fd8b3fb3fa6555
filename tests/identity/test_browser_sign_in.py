"""Sign-in in headless Chromium against the running server: what a person at a browser sees."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Request

from tests.live import LiveServer

pytestmark = pytest.mark.live_server

PASSWORD = "correct-horse-battery-staple-42"


def test_it_keeps_a_wrong_password_on_the_page_with_an_error(asgi_server: LiveServer, page: Page):
    asgi_server.add_person("olivia", PASSWORD, "alpha", "owner")
    page.goto(f"{asgi_server.url}/accounts/login/?next=/healthz")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Password").fill("not-the-password-1")
    page.get_by_role("button", name="Sign in").click()

    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "did not match" in alert.inner_text()
    assert page.url.startswith(f"{asgi_server.url}/accounts/login/")
    assert page.get_by_label("Username").input_value() == "olivia"
    assert page.get_by_label("Password").get_attribute("aria-invalid") == "true"


def test_it_signs_in_and_lands_where_next_says(asgi_server: LiveServer, page: Page):
    asgi_server.add_person("olivia", PASSWORD, "alpha", "owner")
    posts: list[Request] = []
    page.on("request", lambda request: posts.append(request) if request.method == "POST" else None)
    page.goto(f"{asgi_server.url}/accounts/login/?next=/healthz")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation(url=f"{asgi_server.url}/healthz"):
        page.get_by_role("button", name="Sign in").click()

    assert '"ok"' in page.content()
    # The sign-in POST carried the page's own origin, which Django's CSRF check trusts.
    assert [p.headers.get("origin") for p in posts] == [asgi_server.url]
