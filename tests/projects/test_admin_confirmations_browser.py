"""The admin's irreversible actions, each confirmed on a page that names what ends, driven in
headless Chromium by keyboard alone (Tab, Shift+Tab, Enter, Space, arrow keys): an owner revokes
two API keys with the bulk action (and the agents' next call is refused), backs out of revoking
a third, removes a member, ends an auditor's access, and deletes a project by typing its
slug."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from playwright.sync_api import Browser, Locator, Page

from tests.browser import DESKTOP, TIMEOUT_MS
from tests.live import LiveServer, start_live_server, stop_live_server
from tests.projects.admin_pages import PASSWORD, shoot

pytestmark = pytest.mark.live_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("admin-confirmations")
    static = workdir / "static"
    live, pg_name = start_live_server(workdir, extra_env={"STATIC_ROOT": str(static)})
    try:
        live.manage("collectstatic", "--noinput", "--verbosity", "0")
        live.add_person("olivia", PASSWORD, "alpha", "owner")
        live.add_person("carla", PASSWORD, "alpha", "contributor")
        live.add_person("audrey", PASSWORD, "beta", "owner")
        live.run_python(
            "from django.contrib.auth import get_user_model\n"
            "from guardian.shortcuts import assign_perm\n"
            "from projects.models import Project\n"
            "audrey = get_user_model().objects.get(username='audrey')\n"
            "assign_perm('projects.view_project_audit', audrey, Project.objects.get(slug='alpha'))"
        )
        yield live
    finally:
        stop_live_server(live, pg_name)


def key(server: LiveServer, label: str, user: str = "carla") -> tuple[str, str]:
    """A key made as an operator makes one: (its id, its secret)."""
    secret = server.manage("create_api_key", "alpha", "--user", user, "--label", label)
    secret = secret.strip().splitlines()[-1]
    pk = server.run_python(
        f"from projects.api_keys import api_key_find\nresult = str(api_key_find({secret!r}).pk)"
    )
    return str(pk), secret


def answers(server: LiveServer, secret: str) -> int:
    with httpx2.Client(timeout=30) as http:
        reply = http.get(
            f"{server.url}/api/v1/identity", headers={"Authorization": f"Bearer {secret}"}
        )
    return reply.status_code


def keyboard_page(chromium: Browser) -> Page:
    context = chromium.new_context(viewport=DESKTOP)
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


def focus(page: Page, target: Locator, *, backwards: bool = False, presses: int = 200) -> None:
    """Tab (or Shift+Tab) until `target` has the focus, as a keyboard-only person would."""
    key_name = "Shift+Tab" if backwards else "Tab"
    for _ in range(presses):
        page.keyboard.press(key_name)
        if target.evaluate("e => e === document.activeElement"):
            return
    raise AssertionError(f"{key_name} never reached {target}")


def sign_in_by_keyboard(page: Page, server: LiveServer, username: str) -> None:
    page.goto(f"{server.url}/admin/login/?next=/admin/")
    focus(page, page.locator("#id_username"))
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    with page.expect_navigation(url=f"{server.url}/admin/"):
        page.keyboard.press("Enter")


def press(page: Page, target: Locator, key_name: str = "Enter") -> None:
    """Focus by keyboard, then press; wait for the page the press leads to."""
    focus(page, target)
    with page.expect_navigation():
        page.keyboard.press(key_name)


def choose_revoke_and_go(page: Page, ids: list[str]) -> None:
    """Pick the action with the arrow keys, tick the keys with Space, then Shift+Tab back to
    Go and press Enter."""
    action = page.locator("select[name=action]")
    focus(page, action)
    page.keyboard.press("ArrowDown")
    assert action.input_value() == "revoke_selected"
    for pk in ids:
        focus(page, page.locator(f"input[name=_selected_action][value='{pk}']"))
        page.keyboard.press("Space")
    go = page.get_by_role("button", name="Go")
    focus(page, go, backwards=True)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_an_owner_revokes_two_keys_by_keyboard_after_a_confirmation_that_names_them(
    server: LiveServer, chromium: Browser
):
    ci, ci_secret = key(server, "ci-bot")
    deploy, deploy_secret = key(server, "deploy")
    spare, spare_secret = key(server, "spare")
    assert answers(server, ci_secret) == 200
    page = keyboard_page(chromium)
    sign_in_by_keyboard(page, server, "olivia")
    page.goto(f"{server.url}/admin/projects/apikey/")

    choose_revoke_and_go(page, [ci, deploy])

    heading = page.get_by_role("heading", level=1).inner_text()
    assert heading == "Revoke 2 API keys: 'ci-bot' and 'deploy'?"
    ending = page.locator("#ending").inner_text()
    assert "'ci-bot' (hak_" in ending
    assert "'deploy' (hak_" in ending
    assert "in alpha, acting for carla" in ending
    assert "Agents using them will get 401 at once." in ending
    assert "spare" not in ending
    shoot(page, "api-keys-revoke-confirm")
    assert answers(server, ci_secret) == 200  # asking ended nothing

    press(page, page.get_by_role("button", name="Yes, revoke 2 keys"), "Space")

    message = page.locator(".messagelist").inner_text()
    assert "Revoked 2 API keys: 'ci-bot' and 'deploy'." in message
    assert answers(server, ci_secret) == 401
    assert answers(server, deploy_secret) == 401
    assert answers(server, spare_secret) == 200
    revoked = server.run_python(
        "from audit.models import AuditEvent\n"
        "result = sorted(AuditEvent.objects.filter(operation='api_key_revoke', outcome='success')"
        ".values_list('target_id', flat=True))"
    )
    assert revoked == sorted([ci, deploy])

    # And backing out ends nothing.
    choose_revoke_and_go(page, [spare])
    assert page.get_by_role("heading", level=1).inner_text() == "Revoke 1 API key: 'spare'?"
    press(page, page.get_by_role("link", name="No, take me back"))
    assert page.url.endswith("/admin/projects/apikey/")
    assert answers(server, spare_secret) == 200
    page.context.close()


def test_an_owner_removes_a_member_by_keyboard_after_a_confirmation_that_names_what_ends(
    server: LiveServer, chromium: Browser
):
    _, secret = key(server, "carla-laptop")
    membership = server.run_python(
        "from projects.models import Membership\n"
        "result = str(Membership.objects.get(project__slug='alpha', user__username='carla').pk)"
    )
    page = keyboard_page(chromium)
    sign_in_by_keyboard(page, server, "olivia")
    page.goto(f"{server.url}/admin/projects/membership/{membership}/change/")

    press(page, page.get_by_role("link", name="Delete"))

    assert page.get_by_role("heading", level=1).inner_text() == "Remove carla from Alpha?"
    ending = page.locator("#ending").inner_text()
    assert "carla's contributor role in Alpha (alpha)" in ending
    assert "'carla-laptop'" in ending
    assert "every app carla connected to alpha" in ending
    assert "carla loses access to alpha at once" in ending
    shoot(page, "membership-remove-confirm")

    press(page, page.get_by_role("button", name="Yes, remove carla"))

    assert "deleted successfully" in page.locator(".messagelist").inner_text()
    assert answers(server, secret) == 401
    assert not server.run_python(
        "from projects.models import Membership\n"
        f"result = Membership.objects.filter(pk={membership!r}).exists()"
    )
    page.context.close()


def test_an_owner_ends_an_auditors_access_by_keyboard(server: LiveServer, chromium: Browser):
    grant = server.run_python(
        "from projects.models import AuditorGrant\n"
        "result = AuditorGrant.objects.get(user__username='audrey').pk"
    )
    page = keyboard_page(chromium)
    sign_in_by_keyboard(page, server, "olivia")
    page.goto(f"{server.url}/admin/projects/auditorgrant/")
    assert page.get_by_role("link", name="audrey may read alpha's audit log").count() == 1
    page.goto(f"{server.url}/admin/projects/auditorgrant/{grant}/change/")

    press(page, page.get_by_role("link", name="Delete"))

    heading = page.get_by_role("heading", level=1).inner_text()
    assert heading == "Stop audrey reading alpha's audit log?"
    body = page.locator("#content").inner_text()
    assert "audrey may read alpha's audit log" in body
    assert "view_project_audit" not in body
    press(page, page.get_by_role("button", name="Yes, stop audrey reading it"), "Space")

    assert not server.run_python(
        "from projects.models import AuditorGrant\n"
        "result = AuditorGrant.objects.filter(user__username='audrey').exists()"
    )
    page.context.close()


def test_an_owner_deletes_a_project_by_keyboard_typing_its_slug(
    server: LiveServer, chromium: Browser
):
    server.add_person("olivia", PASSWORD, "gamma", "owner")
    server.add_person("carla", PASSWORD, "gamma", "viewer")
    gamma = server.run_python(
        "from projects.models import Project\nresult = str(Project.objects.get(slug='gamma').pk)"
    )
    page = keyboard_page(chromium)
    sign_in_by_keyboard(page, server, "olivia")
    page.goto(f"{server.url}/admin/projects/project/{gamma}/change/")

    press(page, page.get_by_role("link", name="Delete"))

    heading = page.get_by_role("heading", level=1).inner_text()
    assert heading == "Delete the project Gamma (gamma) and everything it holds?"
    ending = page.locator("#ending").inner_text()
    assert "2 memberships" in ending
    assert "This cannot be undone" in ending
    shoot(page, "project-delete-confirm")
    focus(page, page.get_by_label("Slug of the project to delete"))
    page.keyboard.type("gamma")
    with page.expect_navigation():
        page.keyboard.press("Enter")

    assert "deleted successfully" in page.locator(".messagelist").inner_text()
    assert not server.run_python(
        "from projects.models import Project\n"
        "result = Project.objects.filter(slug='gamma').exists()"
    )
    page.context.close()
