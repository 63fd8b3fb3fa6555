"""An invitation's journey in headless Chromium against the real server: the owner invites by
email, the mail (Django's file-based backend: the server writes each mail to a file) carries the
link, which a fresh browser follows; the new person sets a password and lands in the project with
the granted role; the link then fails. And an owner revokes another invitation by keyboard alone,
after a confirmation that names it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser import PHONE
from tests.live import LiveServer, start_live_server, stop_live_server
from tests.web.browsing import (
    PASSWORD,
    assert_fits,
    open_page,
    screenshot_directory,
    sign_in,
    tab_to,
    unnamed_controls,
)

pytestmark = pytest.mark.live_server

LINK = re.compile(r"http://127\.0\.0\.1:\d+/invitations/[A-Za-z0-9_-]{43}/")
NEW_PASSWORD = "a-long-and-unusual-passphrase-42"


@pytest.fixture(scope="module")
def mailbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mailbox")


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, mailbox: Path, live_processes: None
) -> Iterator[LiveServer]:
    mail = {
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(mailbox),
    }
    live, pg_name = start_live_server(tmp_path_factory.mktemp("invitations"), extra_env=mail)
    live.add_person("olivia", PASSWORD, "alpha", "owner")
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


def mails_to(mailbox: Path, address: str) -> list[str]:
    texts = [path.read_text() for path in sorted(mailbox.iterdir())]
    return [text for text in texts if f"To: {address}" in text]


def audit_of(server: LiveServer) -> list[list[str]]:
    return server.run_python(
        "from audit.models import AuditEvent\n"
        "from projects.models import Project\n"
        "alpha = Project.objects.get(slug='alpha')\n"
        "rows = AuditEvent.objects.filter(project_id=alpha.pk, operation__in=["
        "'invitation_create', 'invitation_accept', 'invitation_revoke', 'membership_add'])"
        ".exclude(actor_label='tests.live')\n"
        "result = [[e.operation, e.outcome, e.error_code, e.actor_label]"
        " for e in rows.order_by('occurred_at', 'pk')]"
    )


def invite(page: Page, server: LiveServer, email: str, role: str) -> None:
    page.goto(f"{server.url}/projects/alpha/invitations/")
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Role").select_option(role)
    page.get_by_role("button", name="Send the invitation").click()
    page.wait_for_url("**/sent/")


def test_an_invited_person_joins_from_the_mailed_link_which_then_fails(
    server: LiveServer, mailbox: Path, chromium: Browser, tmp_path: Path
):
    shots = screenshot_directory(tmp_path)
    owner = open_page(chromium)
    sign_in(owner, server, "olivia")
    owner.goto(f"{server.url}/projects/alpha/invitations/")
    assert owner.get_by_label("Role").input_value() == "viewer"  # the least, preselected
    assert unnamed_controls(owner) == []

    invite(owner, server, "nina@example.com", "contributor")

    heading = owner.get_by_role("heading", level=1).inner_text()
    assert heading == "Invitation for nina@example.com"
    assert "We mailed the link to nina@example.com." in owner.get_by_role("status").inner_text()
    shown = owner.locator("#invitation-link").inner_text().strip()
    assert LINK.fullmatch(shown)
    owner.screenshot(path=str(shots / "web-invitation-sent-desktop.png"))
    (mailed,) = mails_to(mailbox, "nina@example.com")
    assert "olivia invites you to join the project Alpha (alpha) as contributor" in mailed
    found = LINK.search(mailed)
    assert found is not None
    link = found.group(0)
    assert link == shown  # the page and the mail give the same link
    owner.reload()  # the page shows it once
    assert owner.locator("#invitation-link").count() == 0
    assert link not in owner.content()

    # The invited person, in a browser of their own, on a phone.
    nina = open_page(chromium, PHONE)
    nina.goto(link)
    assert nina.url == f"{server.url}/invitations/accept/"  # the token went no further
    assert nina.get_by_role("heading", level=1).inner_text() == "Join Alpha on HeyAira"
    assert "invites you (nina@example.com) to the project Alpha as contributor" in (
        nina.get_by_role("main").inner_text()
    )
    assert unnamed_controls(nina) == []
    assert_fits(nina)
    nina.screenshot(path=str(shots / "web-invitation-accept-phone.png"))
    nina.get_by_role("textbox", name="Username").fill("nina")
    nina.get_by_label("Password", exact=True).fill(NEW_PASSWORD)
    nina.get_by_label("Password, again").fill(NEW_PASSWORD)
    nina.get_by_role("button", name="Create my account and join").click()

    nina.wait_for_url(f"{server.url}/projects/alpha/")
    assert "Welcome to Alpha: you are contributor here." in nina.get_by_role("status").inner_text()
    assert "you are contributor" in nina.get_by_role("main").inner_text()
    assert "Signed in as nina" in nina.get_by_role("banner").inner_text()
    assert server.run_python(
        "from projects.models import Membership\n"
        "m = Membership.objects.get(project__slug='alpha', user__username='nina')\n"
        "result = [m.role, m.user.email]"
    ) == ["contributor", "nina@example.com"]

    # The link then fails: in a fresh browser, and in hers.
    stranger = open_page(chromium)
    answer = stranger.goto(link)
    assert answer is not None
    assert answer.status == 410
    assert stranger.get_by_role("heading", level=1).inner_text() == (
        "This invitation cannot be used"
    )
    assert "used already: a link works once" in stranger.get_by_role("main").inner_text()
    again = nina.goto(link)
    assert again is not None
    assert again.status == 410

    assert audit_of(server) == [
        ["invitation_create", "success", "", "olivia"],
        ["invitation_accept", "success", "", "nina"],
        ["membership_add", "success", "", "nina"],
        ["invitation_accept", "rejected", "invitation_used", ""],
        ["invitation_accept", "rejected", "invitation_used", "nina"],
    ]
    for page in (owner, nina, stranger):
        page.context.close()


def test_an_owner_revokes_an_invitation_by_keyboard_after_a_confirmation(
    server: LiveServer, mailbox: Path, chromium: Browser
):
    owner = open_page(chromium)
    sign_in(owner, server, "olivia")
    invite(owner, server, "oscar@example.com", "viewer")
    (mailed,) = mails_to(mailbox, "oscar@example.com")
    link = LINK.search(mailed).group(0)  # type: ignore[union-attr]
    owner.goto(f"{server.url}/projects/alpha/invitations/")

    revoke = owner.get_by_role("link", name="Revoke the invitation for oscar@example.com")
    tab_to(owner, revoke)
    with owner.expect_navigation():
        owner.keyboard.press("Enter")
    heading = owner.get_by_role("heading", level=1).inner_text()
    assert heading == "Revoke the invitation for oscar@example.com?"
    assert "Revoking ends the link at once" in owner.get_by_role("main").inner_text()
    tab_to(owner, owner.get_by_role("button", name="Yes, revoke the invitation"))
    with owner.expect_navigation():
        owner.keyboard.press("Space")

    status = owner.get_by_role("status").inner_text()
    assert "Revoked the invitation for oscar@example.com: its link no longer works." in status
    assert owner.get_by_role("row").filter(has_text="oscar@example.com").count() == 0
    answer = owner.context.new_page().goto(link)
    assert answer is not None
    assert answer.status == 410
    owner.context.close()
