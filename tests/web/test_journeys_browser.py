"""The web UI's journeys in headless Chromium against the real ASGI app: an auditor filters the
audit log and opens an event; a viewer of one project finds nothing of another under any URL;
a member follows a task from the dashboard to its receipts by keyboard alone; a person
disconnects an app and the app's next MCP call is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from playwright.sync_api import Browser, Page

from tests.browser import PHONE
from tests.core.live_calls import call_tool
from tests.identity.chromium_consent import LoopbackCallback, loopback_callback
from tests.identity.flows import Authorization, OAuthClient
from tests.live import LiveServer, start_live_server, stop_live_server
from tests.web.browsing import (
    PASSWORD,
    assert_fits,
    open_page,
    sign_in,
    tab_to,
    unnamed_controls,
)

pytestmark = pytest.mark.live_server

SEED = f"""
from django.contrib.auth import get_user_model
from continuity.services import memory_add, task_create
from projects.auditors import auditor_grant
from projects.callers import operator_caller
from projects.models import Project
from tests.factories import bind_repository, token_caller
from tests.web.content import story_as
User = get_user_model()
alpha, beta = Project.objects.get(slug="alpha"), Project.objects.get(slug="beta")
bind_repository(alpha)
ids = story_as(token_caller(User.objects.get(username="carla"), alpha))
oscar = token_caller(User.objects.get(username="oscar"), beta)
context = oscar.write_context.as_dict()
secret = task_create(oscar, write_context=context, title="Beta secret plan",
                     description="Only beta may read this.")
hidden = memory_add(oscar, write_context=context, kind="note", content="Beta secret note")
audrey = User.objects.create_user(username="audrey", password={PASSWORD!r})
auditor_grant(operator_caller(alpha), user_id=audrey.pk)
result = {{**ids, "beta_task": str(secret.id), "beta_note": str(hidden.id)}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Iterator[LiveServer]:
    live, pg_name = start_live_server(tmp_path_factory.mktemp("web-journeys"))
    live.add_person("olivia", PASSWORD, "alpha", "owner")
    live.add_person("carla", PASSWORD, "alpha", "contributor")
    live.add_person("victor", PASSWORD, "alpha", "viewer")
    live.add_person("oscar", PASSWORD, "beta", "owner")
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


@pytest.fixture(scope="module")
def ids(server: LiveServer) -> dict[str, Any]:
    return dict(server.run_python(SEED))


def test_an_auditor_filters_the_log_and_opens_an_event(
    server: LiveServer, ids: dict[str, Any], chromium: Browser, tmp_path: Path
):
    page = open_page(chromium)
    sign_in(page, server, "audrey")
    page.get_by_role("navigation", name="Your pages").get_by_role("link", name="Audit logs").click()
    page.get_by_role("link", name="Alpha").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Audit log of Alpha"

    page.get_by_label("Operation").fill("task_update")
    page.get_by_label("Outcome").select_option("success")
    page.get_by_label("Actor").fill("carla")
    page.get_by_role("button", name="Apply filters").click()
    query = parse_qs(urlsplit(page.url).query)
    assert query["operation"] == ["task_update"]
    assert query["outcome"] == ["success"]
    assert query["actor"] == ["carla"]
    rows = page.get_by_role("region", name="2 events on this page, filtered").locator("tbody tr")
    assert rows.count() == 2  # the story's two task updates
    for row in rows.all():
        assert row.locator("td").first.inner_text() == "task_update"
    assert unnamed_controls(page) == []
    filtered_url = page.url

    rows.first.get_by_role("link").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Audit event: task_update success"
    details = page.locator("dl.fields").first.inner_text()
    assert "carla" in details
    assert ids["task"] in details
    chain = page.get_by_role("region", name="In the chain").inner_text()
    assert "match its fields and its place" in chain
    # Back to the list, with the filters as they were.
    page.get_by_role("link", name="Alpha").click()
    assert urlsplit(page.url).path == "/audit/alpha/"
    assert parse_qs(urlsplit(page.url).query) == parse_qs(urlsplit(filtered_url).query)

    # Both exports of exactly this filtered set, checked offline by verify_audit --file.
    for link, suffix in (("Download JSON Lines", ".jsonl"), ("Download CSV", ".csv")):
        with page.expect_download() as started:
            page.get_by_role("link", name=link).click()
        download = started.value
        assert download.suggested_filename.startswith("heyaira-audit-alpha-")
        assert download.suggested_filename.endswith(suffix)
        saved = tmp_path / download.suggested_filename
        download.save_as(saved)
        text = saved.read_text()
        assert text.count("task_update") >= 2
        assert "memory_add" not in text  # only the filtered set
        report = server.manage("verify_audit", "--file", str(saved))
        assert "a filtered export" in report
        assert ": ok, 2 events" in report, report
    page.context.close()


def test_a_viewer_of_one_project_sees_nothing_of_another_under_any_url(
    server: LiveServer, ids: dict[str, Any], chromium: Browser
):
    page = open_page(chromium)
    sign_in(page, server, "victor")
    beta_urls = [
        "/projects/beta/",
        f"/projects/beta/tasks/{ids['beta_task']}/",
        f"/projects/alpha/tasks/{ids['beta_task']}/",
        "/projects/beta/memory/",
        "/projects/beta/memory/?q=secret",
        f"/projects/beta/memory/{ids['beta_note']}/",
        f"/projects/alpha/memory/{ids['beta_note']}/",
        "/projects/beta/summaries/",
        "/projects/beta/keys/",
        "/audit/beta/",
        "/audit/alpha/",  # a viewer is no auditor of their own project either
    ]
    for url in beta_urls:
        response = page.goto(f"{server.url}{url}")
        assert response is not None
        assert response.status == 404, url
        assert page.get_by_role("heading", level=1).inner_text() == "Page not found", url
        assert "Beta" not in page.content(), url
    for url in [
        "/",
        "/projects/",
        "/projects/alpha/",
        "/projects/alpha/memory/?q=secret",
        "/audit/",
    ]:
        page.goto(f"{server.url}{url}")
        text = page.locator("body").inner_text()
        assert "Beta" not in text, url  # beta's name, task and note alike
    page.context.close()


def test_a_member_follows_a_task_to_its_receipts_by_keyboard_alone(
    server: LiveServer, ids: dict[str, Any], chromium: Browser
):
    page = open_page(chromium, PHONE)
    page.goto(f"{server.url}/accounts/login/?next=/")
    tab_to(page, page.get_by_label("Username"))
    page.keyboard.type("carla")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    with page.expect_navigation(url=f"{server.url}/"):
        page.keyboard.press("Enter")

    for name in ("Open your dashboard", "Alpha", "Ship the dashboard"):
        link = page.get_by_role("main").get_by_role("link", name=name, exact=True)
        tab_to(page, link)
        with page.expect_navigation():
            page.keyboard.press("Enter")
    assert page.url == f"{server.url}/projects/alpha/tasks/{ids['task']}/"
    assert page.get_by_role("heading", level=1).inner_text() == "Ship the dashboard"
    receipts = page.get_by_role("region", name="Work receipts")
    assert receipts.get_by_role("article").count() == 2
    newest = receipts.get_by_role("article").first
    assert "session-two" in newest.inner_text()
    assert "Wrote the templates." in newest.inner_text()
    older = receipts.get_by_role("article").nth(1).inner_text()
    assert "✓ passed pytest tests/web" in older
    assert "abcdef123456" in older
    assert_fits(page)
    page.context.close()


def _register(http: httpx2.Client, server: LiveServer, callback: LoopbackCallback) -> OAuthClient:
    answer = http.post(
        f"{server.url}/oauth/register/",
        json={
            "client_name": "Journey client",
            "redirect_uris": [callback.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert answer.status_code == 201, answer.text
    return OAuthClient(client_id=answer.json()["client_id"], redirect_uri=callback.redirect_uri)


def _consent_in_chromium(page: Page, server: LiveServer, auth: Authorization) -> str:
    """The person allows the client for alpha in the browser; returns the code."""
    page.goto(f"{server.url}{auth.url()}")
    page.get_by_label("Alpha (alpha, you are contributor)", exact=True).check()
    page.get_by_role("button", name="Allow").click()
    page.wait_for_url(f"{auth.oauth.redirect_uri}?**")
    return parse_qs(urlsplit(page.url).query)["code"][0]


def test_a_person_disconnects_an_app_and_its_next_mcp_call_is_refused(
    server: LiveServer, ids: dict[str, Any], chromium: Browser
):
    page = open_page(chromium)
    sign_in(page, server, "carla")
    with loopback_callback() as callback, httpx2.Client(timeout=30) as http:
        oauth = _register(http, server, callback)
        auth = Authorization(
            oauth, scope="continuity:read continuity:write", resource=server.mcp_url
        )
        code = _consent_in_chromium(page, server, auth)
        tokens = http.post(
            f"{server.url}/oauth/token/",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": oauth.redirect_uri,
                "client_id": oauth.client_id,
                "code_verifier": auth.verifier,
            },
        ).json()
        token = tokens["access_token"]
        assert call_tool(http, server, token, "server_identity", {}).ok

        # By keyboard alone: Tab to the button, Enter to ask, then the confirmation page.
        page.goto(f"{server.url}/apps/")
        row = page.get_by_role("row").filter(has_text="Journey client")
        assert "continuity:read, continuity:write" in row.inner_text()
        assert "UTC" in row.locator("td").nth(3).inner_text()  # last used: the call just now
        tab_to(page, row.get_by_role("button", name="Disconnect Journey client from Alpha"))
        with page.expect_navigation():
            page.keyboard.press("Enter")
        heading = page.get_by_role("heading", level=1).inner_text()
        assert heading == "Disconnect “Journey client” from Alpha?"
        assert "Its tokens end at once" in page.get_by_role("main").inner_text()
        assert call_tool(http, server, token, "server_identity", {}).ok  # asking ended nothing
        tab_to(page, page.get_by_role("button", name="Disconnect Journey client"))
        with page.expect_navigation():
            page.keyboard.press("Space")
        assert "Disconnected" in page.get_by_role("status").inner_text()
        assert page.get_by_role("row").filter(has_text="Journey client").count() == 0

        refused = call_tool(http, server, token, "server_identity", {})
        assert refused.status == 401
        again = http.post(
            f"{server.url}/oauth/token/",
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": oauth.client_id,
            },
        )
        assert again.status_code == 400  # and it cannot refresh its way back in
    page.context.close()


def test_an_owner_revokes_an_api_key_by_keyboard_after_a_confirmation_and_cancel(
    server: LiveServer, ids: dict[str, Any], chromium: Browser
):
    key = server.run_python(
        """
from django.contrib.auth import get_user_model
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import Project
carla = get_user_model().objects.get(username="carla")
issued = api_key_create(operator_caller(Project.objects.get(slug="alpha")), user_id=carla.pk,
                        label="ci-bot", scopes=["continuity:read"])
result = issued.secret
"""
    )
    page = open_page(chromium, PHONE)
    page.goto(f"{server.url}/accounts/login/?next=/projects/alpha/keys/")
    tab_to(page, page.get_by_label("Username"))
    page.keyboard.type("olivia")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    with page.expect_navigation(url=f"{server.url}/projects/alpha/keys/"):
        page.keyboard.press("Enter")
    revoke = page.get_by_role("button", name="Revoke the key ci-bot")
    with httpx2.Client(timeout=30) as http:
        # Ask, then Cancel (a link: Enter follows it): nothing ends.
        tab_to(page, revoke)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.get_by_role("heading", level=1).inner_text() == "Revoke key “ci-bot”?"
        assert "Agents using it will get 401 at once" in page.get_by_role("main").inner_text()
        assert_fits(page)
        tab_to(page, page.get_by_role("link", name="Cancel"))
        with page.expect_navigation(url=f"{server.url}/projects/alpha/keys/"):
            page.keyboard.press("Enter")
        assert call_tool(http, server, key, "server_identity", {}).ok

        # Ask again and confirm with Space.
        tab_to(page, revoke)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        tab_to(page, page.get_by_role("button", name="Revoke ci-bot"))
        with page.expect_navigation(url=f"{server.url}/projects/alpha/keys/"):
            page.keyboard.press("Space")
        assert "Revoked the key ci-bot" in page.get_by_role("status").inner_text()
        row = page.get_by_role("row").filter(has_text="ci-bot")
        assert "revoked" in row.inner_text()
        assert row.get_by_role("button").count() == 0
        refused = call_tool(http, server, key, "server_identity", {})
        assert refused.status == 401
    page.context.close()


CLAIMED = """
from django.contrib.auth import get_user_model
from continuity.services import task_create, task_update
from projects.models import Project
from tests.factories import token_caller
carla = token_caller(get_user_model().objects.get(username="carla"),
                     Project.objects.get(slug="alpha"))
context = carla.write_context.as_dict()
task = task_create(carla, write_context=context, title="Migrate the audit index",
                   description="Add the target index without a long lock.")
claimed = task_update(carla, write_context=context, task_id=task.id, expected_version=1,
                      status="in_progress", session_ref="crashed-session")
result = {"task": str(task.id), "version": claimed.task.version}
"""

AFTER_RELEASE = """
from audit.models import AuditEvent
from continuity.models import Task
task = Task.objects.get(pk={task!r})
released = AuditEvent.objects.filter(operation="lease_released", target_type="lease_holder")
result = {{"status": task.status, "version": task.version,
          "lease_actor": task.lease_actor, "holders": list(released.values_list("target_id",
          flat=True))}}
"""


def test_an_owner_releases_a_crashed_sessions_lease_and_its_holder_sees_why(
    server: LiveServer, chromium: Browser
):
    claimed = server.run_python(CLAIMED)
    task_url = f"{server.url}/projects/alpha/tasks/{claimed['task']}/"

    # The holder, a contributor, sees the lease but may not end it.
    page = open_page(chromium, PHONE)
    sign_in(page, server, "carla")
    page.goto(task_url)
    lease = page.locator("dt", has_text="Lease").locator("xpath=following-sibling::dd[1]")
    assert "held by carla, session crashed-session, until" in lease.inner_text()
    assert page.get_by_role("button", name="Release the lease").count() == 0
    page.context.close()

    # The owner ends it: the task is back in To do, and the page says whose lease it was.
    page = open_page(chromium, PHONE)
    sign_in(page, server, "olivia")
    page.goto(task_url)
    page.get_by_role("button", name="Release the lease").click()
    page.wait_for_url(task_url)
    assert "Released the lease of carla: the task is back in To do." in page.inner_text("main")
    lease = page.locator("dt", has_text="Lease").locator("xpath=following-sibling::dd[1]")
    assert lease.inner_text().strip() == "none"
    assert page.get_by_role("button", name="Release the lease").count() == 0
    assert_fits(page)
    page.context.close()

    after = server.run_python(AFTER_RELEASE.format(task=claimed["task"]))
    assert after["status"] == "todo"
    assert after["version"] == claimed["version"] + 1
    assert after["lease_actor"] == ""
    assert any("crashed-session" in holder for holder in after["holders"]), after
