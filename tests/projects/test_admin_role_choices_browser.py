"""The role choices in /admin/ are exactly the roles the signed-in person may grant in that
project: an admin is offered viewer and contributor only, an owner all four, and someone who
is an owner of one project and an admin of another sees the list follow the chosen project.
Whatever is offered, the least role (viewer) is the one preselected."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.live import LiveServer
from tests.projects.admin_pages import PASSWORD, open_from_index, options, shoot, sign_in

EVERY_ROLE = ["owner", "admin", "contributor", "viewer"]
UNPRIVILEGED = ["contributor", "viewer"]


def test_it_offers_an_admin_only_viewer_and_contributor(admin_server: LiveServer, page: Page):
    server = admin_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.add_person("adam", PASSWORD, "alpha", "admin")
    server.add_person("carla", PASSWORD, "alpha", "contributor")
    sign_in(page, server, "adam")

    open_from_index(page, server, "Memberships")
    page.get_by_role("link", name="Add membership").click()
    assert options(page.locator("#id_role")) == UNPRIVILEGED
    assert page.locator("#id_role").input_value() == "viewer"  # the least role, preselected
    shoot(page, "membership-add-as-admin")

    open_from_index(page, server, "Memberships")
    page.get_by_role("link", name="carla", exact=True).click()
    assert options(page.locator("#id_role")) == UNPRIVILEGED

    # The owner's membership: nothing to offer, so the page is read-only, with no delete.
    open_from_index(page, server, "Memberships")
    page.get_by_role("link", name="olivia", exact=True).click()
    assert page.locator(".field-role .readonly").inner_text() == "Owner"  # waits for the page
    assert page.locator("#id_role").count() == 0
    assert page.locator("a.deletelink").count() == 0
    shoot(page, "membership-owner-read-only")


def test_it_follows_the_chosen_project(admin_server: LiveServer, page: Page):
    server = admin_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.add_person("bruno", PASSWORD, "beta", "owner")
    server.add_person("olivia", PASSWORD, "beta", "admin")
    ids = server.run_python(
        "from projects.models import Project\n"
        "result = {p.slug: str(p.pk) for p in Project.objects.all()}"
    )
    sign_in(page, server, "olivia")
    open_from_index(page, server, "Memberships")
    page.get_by_role("link", name="Add membership").click()

    page.select_option("#id_project", ids["beta"])
    assert options(page.locator("#id_role")) == UNPRIVILEGED
    page.select_option("#id_project", ids["alpha"])
    assert options(page.locator("#id_role")) == EVERY_ROLE
    # Offered every role, the owner still starts from the least one: never owner by default.
    assert page.locator("#id_role").input_value() == "viewer"
