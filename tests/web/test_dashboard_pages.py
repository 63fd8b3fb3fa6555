"""The member dashboard shows what the agents did: open tasks with their handoff, a task's
description and receipts as a timeline, decisions and notes with what superseded what, search,
and each agent's running summary with its versions."""

from __future__ import annotations

from django.test import Client

from audit.models import AuditEvent
from continuity.services import task_update
from tests.factories import World, make_project, make_user, wc
from tests.web.content import story


def test_it_offers_a_picker_of_the_persons_own_projects(world: World, client: Client):
    make_project("gamma", world.contributor)
    client.force_login(world.contributor)
    html = client.get("/projects/").content.decode()
    assert 'href="/projects/alpha/">Alpha</a>' in html
    assert 'href="/projects/gamma/">Gamma</a>' in html
    assert "/projects/beta/" not in html


def test_it_shows_open_tasks_with_their_whole_handoff(world: World, client: Client):
    ids = story(world)
    client.force_login(world.viewer)
    html = client.get("/projects/alpha/").content.decode()
    assert f'href="/projects/alpha/tasks/{ids["task"]}/">Ship the dashboard</a>' in html
    assert "in progress" in html
    assert "Browser journeys" in html  # the next step
    assert "<li>Waiting for the chain branch</li>" in html  # blockers
    assert (
        "version 3, moved by </span>carla" in html
    )  # the version after two updates, who moved it last
    # The repository reference, linked to the bound GitHub repository and its branch.
    assert (
        '<a href="https://github.com/acme/app"><code>acme/app</code></a> on '
        '<a href="https://github.com/acme/app/tree/web-ui"><code>web-ui</code></a>'
    ) in html


def test_it_leaves_finished_tasks_off_the_board(world: World, client: Client):
    ids = story(world)
    carla = world.caller("contributor")
    task_update(
        carla, write_context=wc(carla), task_id=ids["task"], expected_version=3, status="done"
    )
    client.force_login(world.viewer)
    html = client.get("/projects/alpha/").content.decode()
    assert "Ship the dashboard" not in html
    assert "No open tasks" in html


def test_it_follows_a_task_to_its_description_and_receipts_newest_first(
    world: World, client: Client
):
    ids = story(world)
    client.force_login(world.viewer)
    html = client.get(f"/projects/alpha/tasks/{ids['task']}/").content.decode()
    assert "Acceptance: every page has a test." in html
    assert html.index("session-two") < html.index("session-one")
    assert '<span class="badge test-passed">✓ passed</span> <code>pytest tests/web</code>' in html
    assert (
        '<a href="https://github.com/acme/app/commit/abcdef1234567" title="abcdef1234567">'
        "<code>abcdef123456</code></a>"
    ) in html
    assert "Wrote the selectors." in html


def test_it_shows_what_superseded_what(world: World, client: Client):
    ids = story(world)
    client.force_login(world.viewer)
    html = client.get("/projects/alpha/memory/").content.decode()
    assert f'Supersedes <a href="/projects/alpha/memory/{ids["old"]}/">' in html
    newer = "Render pages on the server, no script"
    assert f'by <a href="/projects/alpha/memory/{ids["new"]}/">{newer}</a>' in html
    assert html.index("Keyset pagination everywhere.") < html.index("no JavaScript at all")
    detail = client.get(f"/projects/alpha/memory/{ids['old']}/").content.decode()
    assert f'href="/projects/alpha/memory/{ids["new"]}/">{newer}</a>' in detail  # by its title
    later = client.get(f"/projects/alpha/memory/{ids['new']}/").content.decode()
    older = "Render pages on the server"
    assert f'href="/projects/alpha/memory/{ids["old"]}/">{older}</a>' in later
    assert "Fewer moving parts." in detail  # the rationale


def test_it_searches_decisions_and_notes_through_memory_search(world: World, client: Client):
    story(world)
    client.force_login(world.viewer)
    html = client.get("/projects/alpha/memory/?q=JavaScript").content.decode()
    assert "Render pages on the server, no script" in html
    assert "Keyset pagination" not in html
    # The search page's view is audited as a page view (counted; web.access).
    viewed = AuditEvent.objects.filter(operation="page_view", actor_label="victor")
    assert viewed.filter(target_id="web:memories").exists()
    only_notes = client.get("/projects/alpha/memory/?q=JavaScript&kind=note").content.decode()
    assert "Nothing matches." in only_notes


def test_it_shows_each_agents_running_summary_with_every_version(world: World, client: Client):
    story(world)
    client.force_login(world.viewer)
    listing = client.get("/projects/alpha/summaries/").content.decode()
    assert 'href="/projects/alpha/summaries/codex/">codex</a>' in listing
    assert "version 2 of 2" in listing
    html = client.get("/projects/alpha/summaries/codex/").content.decode()
    assert html.index("version 2 of the goal") < html.index("version 1 of the goal")
    assert "Version 2 (the newest)" in html


def test_it_tells_a_person_without_projects_so(db, client: Client):
    client.force_login(make_user("nora"))
    assert "not a member of any project yet" in client.get("/projects/").content.decode()


def test_it_refuses_a_damaged_cursor_with_a_plain_page(world: World, client: Client):
    client.force_login(world.viewer)
    response = client.get("/projects/alpha/?after=%%%")
    assert response.status_code == 400
    assert "This address is not understood" in response.content.decode()
