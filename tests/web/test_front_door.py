"""The front door at /: what this server is, where to sign in, what to paste into a client, and
for a signed-in person their own projects and role."""

from __future__ import annotations

from django.conf import settings
from django.test import Client

from tests.factories import World


def test_it_tells_an_anonymous_visitor_what_this_is_and_where_to_go(db, client: Client):
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "durable state layer for AI agents" in html
    assert f"<code>{settings.HEYAIRA_MCP_RESOURCE}</code>" in html
    assert 'href="/accounts/login/"' in html
    assert 'href="/admin/"' in html
    assert f"{settings.HEYAIRA_PUBLIC_URL}/api/v1/identity" in html.replace("<wbr>", "")
    assert 'href="/healthz"' in html
    assert "claude mcp add --transport http" in html
    assert "Sign out" not in html


def test_it_shows_a_member_their_projects_and_role_and_nobody_elses(
    world: World, client: Client, django_assert_max_num_queries
):
    client.force_login(world.contributor)
    client.get("/")  # warms the per-process caches (guardian's content types and permissions)
    # The session, the user, the memberships with their projects, and whether any audit log is
    # theirs to read (only then is one offered).
    with django_assert_max_num_queries(4):
        response = client.get("/")
    html = response.content.decode()
    assert "Signed in as <strong>carla</strong>" in html
    assert "<td>Alpha</td><td><code>alpha</code></td><td>Contributor</td>" in html
    assert "Beta" not in html  # the outsider's project
    assert "Sign out" in html
    assert "Open the admin" not in html  # contributors are not staff


def test_it_points_staff_to_the_admin(world: World, client: Client):
    client.force_login(world.owner)
    html = client.get("/").content.decode()
    assert "<td>Alpha</td><td><code>alpha</code></td><td>Owner</td>" in html
    assert "Open the admin" in html


def test_it_says_so_when_a_person_has_no_project(world: World, client: Client):
    from tests.factories import make_user

    client.force_login(make_user("nora"))
    assert "not a member of any project yet" in client.get("/").content.decode()


def test_it_cannot_be_framed_and_is_not_cached(db, client: Client):
    response = client.get("/")
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cache-Control"] == "no-store"


def test_it_sends_people_to_the_front_door_after_sign_in_and_sign_out(world: World):
    client = Client()
    signed_in = client.post("/accounts/login/", {"username": "carla", "password": "pw-carla-Xy7!"})
    assert signed_in["Location"] == "/"
    signed_out = client.post("/accounts/logout/")
    assert signed_out["Location"] == "/"
    assert "Sign out" not in client.get("/").content.decode()


def test_it_is_where_the_admins_view_site_link_goes(world: World, client: Client):
    client.force_login(world.owner)
    assert '<a href="/">View site</a>' in client.get("/admin/").content.decode()
    assert client.get("/").status_code == 200


def test_it_answers_head_for_monitors_and_refuses_a_post(db, client: Client):
    assert client.head("/").status_code == 200
    assert client.post("/").status_code == 405
