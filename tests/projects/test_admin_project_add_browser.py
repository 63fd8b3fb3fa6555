"""A superuser adds a project in /admin/, picking its first owner; the project service makes
the owner's membership and the audit rows. The admin lists no unused model (OIDC ID tokens)."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.live import LiveServer
from tests.projects.admin_pages import PASSWORD, open_from_index, shoot, sign_in


def test_it_lets_a_superuser_add_a_project_with_its_first_owner(
    admin_server: LiveServer, page: Page
):
    server = admin_server
    server.run_python(
        "from django.contrib.auth import get_user_model\n"
        "User = get_user_model()\n"
        f"User.objects.create_superuser(username='root', password={PASSWORD!r})\n"
        f"User.objects.create_user(username='nina', password={PASSWORD!r})"
    )
    sign_in(page, server, "root")
    assert "Id tokens" not in page.locator("#content-main").inner_text()

    open_from_index(page, server, "Projects")
    page.get_by_role("link", name="Add project").click()
    page.fill("#id_slug", "gamma")
    page.fill("#id_name", "Gamma")
    page.select_option("#id_owner", label="nina")
    shoot(page, "project-add")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")

    made = server.run_python(
        "from audit.models import AuditEvent\n"
        "from projects.models import Membership, Project\n"
        "gamma = Project.objects.get(slug='gamma')\n"
        "result = {\n"
        "  'name': gamma.name,\n"
        "  'members': [[m.user.username, m.role]\n"
        "              for m in Membership.objects.filter(project=gamma)],\n"
        "  'nina_is_staff': Membership.objects.get(project=gamma).user.is_staff,\n"
        "  'audit': sorted([e.operation, e.outcome, e.actor_label, e.credential_kind]\n"
        "                  for e in AuditEvent.objects.filter(project_id=gamma.pk)),\n"
        "}"
    )
    assert made == {
        "name": "Gamma",
        "members": [["nina", "owner"]],
        "nina_is_staff": True,  # so that she can sign in here and run her project
        "audit": [
            ["membership_add", "success", "root", "session"],
            ["project_create", "success", "root", "session"],
        ],
    }


def test_it_shows_a_taken_slug_on_the_form_and_audits_it(admin_server: LiveServer, page: Page):
    server = admin_server
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    server.run_python(
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.create_superuser(username='root', password={PASSWORD!r})"
    )
    sign_in(page, server, "root")
    page.goto(f"{server.url}/admin/projects/project/add/")
    page.fill("#id_slug", "alpha")
    page.fill("#id_name", "Another alpha")
    page.select_option("#id_owner", label="olivia")
    page.click("input[name=_save]")

    problem = page.locator(".field-slug .errorlist").inner_text()
    assert problem == "Another project already has this slug."
    assert server.run_python(
        "from audit.models import AuditEvent\n"
        "result = [[e.outcome, e.error_code, e.actor_label] for e in AuditEvent.objects"
        ".filter(operation='project_create', outcome='rejected')]"
    ) == [["rejected", "validation_error", "root"]]
