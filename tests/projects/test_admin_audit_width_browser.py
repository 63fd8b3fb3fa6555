"""The audit list fits a 1280x800 window: no sideways scrolling, long values cut short in the
list (in full on the event's own page)."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.live import LiveServer
from tests.projects.admin_pages import PASSWORD, shoot, sign_in

# Usernames may be 150 characters without a space: the audit list must not stretch for them.
LONG_NAME = "quality-assurance.reviewer_for-the-alpha-project-2026@example.com" * 2
LONG_SLUG = "a-project-with-the-longest-slug-that-is-allowed-50"  # 50 characters


def test_it_fits_the_audit_list_in_1280_pixels(admin_server: LiveServer, page: Page):
    server = admin_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.add_person(LONG_NAME, PASSWORD, "alpha", "admin")
    server.add_person("carla", PASSWORD, "alpha", "contributor")
    server.add_person("olivia", PASSWORD, LONG_SLUG, "owner")
    server.run_python(
        f"""
from django.contrib.auth import get_user_model
from audit.recorder import SecurityContext, record_security_event
from core.errors import HeyAiraError
from projects.callers import session_caller
from projects.models import Membership, Project
from projects.services import membership_change
alpha = Project.objects.get(slug="alpha")
reviewer = get_user_model().objects.get(username={LONG_NAME!r})
carla = Membership.objects.get(project=alpha, user__username="carla")
caller = session_caller(reviewer, alpha)
membership_change(caller, membership_id=carla.pk, role="viewer")
try:
    membership_change(caller, membership_id=carla.pk, role="owner")
except HeyAiraError:
    pass
# The widest row there is: the longest operation name and error code, a 150-character label.
record_security_event(
    "oauth_client_register", "rejected", SecurityContext(actor_label="x" * 150),
    project=Project.objects.get(slug={LONG_SLUG!r}), error_code="write_context_mismatch",
)
"""
    )
    sign_in(page, server, "olivia")
    assert page.viewport_size == {"width": 1280, "height": 800}

    page.goto(f"{server.url}/admin/audit/auditevent/")

    rows = page.locator("#result_list tbody tr")
    assert rows.count() >= 9
    assert "rejected" in page.locator("#result_list").inner_text().lower()
    results = page.locator(".results")
    table = results.evaluate("box => [box.scrollWidth, box.clientWidth]")
    assert table[0] <= table[1], f"the table needs {table[0]} px in a {table[1]} px box"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, f"the audit list is {width} px wide"
    shoot(page, "audit-list")
    # The full value is on the event's own page.
    page.locator("#result_list tbody tr").nth(1).locator("a").first.click()
    label = page.locator(".field-actor_label .readonly")
    assert label.inner_text() == LONG_NAME  # the refused change
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    shoot(page, "audit-event")
