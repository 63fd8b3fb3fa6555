"""A project owner who is not a superuser runs their project from /admin/ in Chromium: adds a
member, changes a role, binds a repository, creates an API key (its secret shown once, a
reload shows nothing and mints nothing) and revokes it. Each effect is checked in the database,
with its audit row."""

from __future__ import annotations

import re

from playwright.sync_api import Page

from tests.live import LiveServer
from tests.projects.admin_pages import PASSWORD, open_from_index, shoot, sign_in

SECRET = re.compile(r"hak_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")


def set_up(server: LiveServer) -> None:
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.add_person("carla", PASSWORD, "alpha", "contributor")
    server.run_python(
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.create_user(username='nina', password={PASSWORD!r})"
    )
    assert not server.run_python(
        "from django.contrib.auth import get_user_model\n"
        "result = get_user_model().objects.get(username='olivia').is_superuser"
    )


def olivias_audit(server: LiveServer) -> list[list[str]]:
    return server.run_python(
        "from audit.models import AuditEvent\n"
        "result = [[e.operation, e.outcome, e.credential_kind] for e in AuditEvent.objects"
        ".filter(actor_label='olivia').order_by('occurred_at')]"
    )


def test_it_lets_a_non_superuser_owner_run_their_project(admin_server: LiveServer, page: Page):
    server = admin_server
    set_up(server)
    sign_in(page, server, "olivia")

    add_member(server, page)
    change_role(server, page)
    bind_repository(server, page)
    key_id = create_key_and_see_it_once(server, page)
    revoke_key(server, page, key_id)

    assert olivias_audit(server) == [
        ["membership_add", "success", "session"],
        ["membership_change", "success", "session"],
        ["repository_bind", "success", "session"],
        ["api_key_create", "success", "session"],
        ["api_key_revoke", "success", "session"],
    ]


def add_member(server: LiveServer, page: Page) -> None:
    open_from_index(page, server, "Memberships")
    page.get_by_role("link", name="Add membership").click()
    project = page.locator("#id_project")
    assert project.input_value() != ""  # the one project she manages is chosen for her
    page.fill("#id_username", "nina")
    page.select_option("#id_role", "viewer")
    shoot(page, "membership-add")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    assert (
        server.run_python(
            "from projects.models import Membership\n"
            "result = Membership.objects.get(project__slug='alpha', user__username='nina').role"
        )
        == "viewer"
    )


def change_role(server: LiveServer, page: Page) -> None:
    open_from_index(page, server, "Memberships")
    page.get_by_role("link", name="carla", exact=True).click()
    page.select_option("#id_role", "admin")
    shoot(page, "membership-change")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    assert (
        server.run_python(
            "from projects.models import Membership\n"
            "result = Membership.objects.get(project__slug='alpha', user__username='carla').role"
        )
        == "admin"
    )


def bind_repository(server: LiveServer, page: Page) -> None:
    open_from_index(page, server, "Repository bindings")
    page.get_by_role("link", name="Add repository binding").click()
    page.select_option("#id_provider", "github")
    page.fill("#id_owner", "acme")
    page.fill("#id_name", "web")
    page.fill("#id_url", "https://github.com/acme/web")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    assert server.run_python(
        "from projects.models import ProjectRepository\n"
        "result = [b.repository.full_name for b in ProjectRepository.objects"
        ".filter(project__slug='alpha')]"
    ) == ["acme/web"]


def create_key_and_see_it_once(server: LiveServer, page: Page) -> str:
    open_from_index(page, server, "API keys")
    page.get_by_role("link", name="Add API key").click()
    page.fill("#id_username", "carla")
    page.fill("#id_label", "laptop")
    page.check("input[name=scopes][value='continuity:write']")
    page.click("input[name=_save]")

    secret_box = page.locator("#api-key-secret")
    secret = secret_box.input_value()
    assert SECRET.fullmatch(secret)
    assert re.search(r"/admin/projects/apikey/[0-9a-f-]{36}/created/$", page.url)
    shoot(page, "api-key-created", mask=[secret_box])
    key = server.run_python(
        "from projects.api_keys import api_key_find\n"
        "from projects.models import ApiKey\n"
        f"found = api_key_find({secret!r})\n"
        "result = [ApiKey.objects.count(), str(found.pk), found.user.username, found.scopes]"
    )
    assert key[0] == 1
    assert key[2:] == ["carla", ["continuity:read", "continuity:write"]]

    page.reload()  # reloading shows no secret and mints no second key
    page.locator("#api-key-secret-gone").wait_for()
    assert page.locator("#api-key-secret").count() == 0
    assert not SECRET.search(page.content())
    shoot(page, "api-key-shown-once")
    assert not any(SECRET.search(c["value"]) for c in page.context.cookies())
    count = "from projects.models import ApiKey\nresult = ApiKey.objects.count()"
    assert server.run_python(count) == 1
    return str(key[1])


def revoke_key(server: LiveServer, page: Page, key_id: str) -> None:
    open_from_index(page, server, "API keys")
    page.check(f"input[name=_selected_action][value='{key_id}']")
    page.select_option("select[name=action]", "revoke_selected")
    page.get_by_role("button", name="Go").click()
    # First the confirmation, naming the key; nothing ends until she says yes.
    assert page.get_by_role("heading", level=1).inner_text() == "Revoke 1 API key: 'laptop'?"
    assert "Agents using it will get 401 at once." in page.locator("#ending").inner_text()
    shoot(page, "api-key-revoke-confirm")
    page.get_by_role("button", name="Yes, revoke 1 key").click()
    page.wait_for_selector(".messagelist .info, .messagelist .success")
    assert "Revoked 1 API key: 'laptop'." in page.locator(".messagelist").inner_text()
    assert server.run_python(
        "from projects.models import ApiKey\n"
        f"result = ApiKey.objects.get(pk={key_id!r}).revoked_at is not None"
    )
