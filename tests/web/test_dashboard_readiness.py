"""What agents rely on, visible to people: a task that waits on others says so (with links) and
does not look like a plain todo, a ready one says "ready"; a status filter reaches done and
cancelled tasks and their receipts; a list cut short says how many more there are."""

from __future__ import annotations

import re
from typing import Any

from django.test import Client

from continuity.services import task_create, task_update
from tests.continuity.helpers import as_json
from tests.factories import World, wc


def make(world: World, title: str, **fields: Any) -> dict[str, Any]:
    carla = world.caller("contributor")
    return as_json(
        task_create(carla, write_context=wc(carla), title=title, description="d", **fields)
    )


def move(world: World, task: dict[str, Any], *statuses: str, **fields: Any) -> None:
    carla = world.caller("contributor")
    version = task["version"]
    for status in statuses:
        moved = as_json(
            task_update(
                carla,
                write_context=wc(carla),
                task_id=task["id"],
                expected_version=version,
                status=status,
                **fields,
            )
        )
        version = moved["task"]["version"]
        fields = {}


def row_of(html: str, title: str) -> str:
    """The dashboard row whose title cell is `title`."""
    found = re.search(rf'<td class="title"><a href="[^"]+">{re.escape(title)}</a></td>', html)
    assert found is not None, title
    start = found.start()
    return html[html.rindex("<tr>", 0, start) : html.index("</tr>", start)]


def test_a_task_waiting_on_others_says_so_with_links_and_a_free_one_says_ready(
    world: World, client: Client
):
    schema = make(world, "Write the schema")
    api = make(world, "Write the API")
    docs = make(world, "Document it", blocked_by=[schema["id"], api["id"]])
    client.force_login(world.viewer)
    html = client.get("/projects/alpha/").content.decode()
    waiting = row_of(html, "Document it")
    assert '<span class="badge status-todo">to do</span>' in waiting
    assert '<span class="badge ready-waiting">waiting on 2 tasks</span>' in waiting
    assert f'href="/projects/alpha/tasks/{schema["id"]}/">Write the schema</a>' in waiting
    assert f'href="/projects/alpha/tasks/{api["id"]}/">Write the API</a>' in waiting
    assert "ready-yes" not in waiting
    assert '<span class="badge ready-yes">ready</span>' in row_of(html, "Write the schema")

    move(world, schema, "in_progress", "done")
    move(world, api, "in_progress", "done")
    html = client.get("/projects/alpha/").content.decode()
    assert '<span class="badge ready-yes">ready</span>' in row_of(html, "Document it")
    page = client.get(f"/projects/alpha/tasks/{docs['id']}/").content.decode()
    assert "Every task it is blocked by is done." in page
    assert '<span class="badge ready-yes">ready</span>' in page


def test_the_task_page_lists_what_it_waits_on_and_what_waits_on_it(world: World, client: Client):
    first = make(world, "First")
    second = make(world, "Second", blocked_by=[first["id"]])
    third = make(world, "Third", blocked_by=[second["id"]])
    client.force_login(world.viewer)
    page = client.get(f"/projects/alpha/tasks/{second['id']}/").content.decode()
    section = page[page.index('id="dependencies"') :]
    assert "It waits on 1 of the 1 task it is blocked by" in section
    assert f'href="/projects/alpha/tasks/{first["id"]}/">First</a>' in section
    assert "Waiting on it" in section
    assert f'href="/projects/alpha/tasks/{third["id"]}/">Third</a>' in section
    assert '<span class="badge ready-waiting">waiting on 1 task</span>' in page


def test_more_than_three_dependencies_end_in_and_n_more(world: World, client: Client):
    blockers = [make(world, f"Blocker {n}") for n in range(5)]
    make(world, "Last", blocked_by=[b["id"] for b in blockers])
    client.force_login(world.viewer)
    row = row_of(client.get("/projects/alpha/").content.decode(), "Last")
    assert "waiting on 5 tasks" in row
    assert len(re.findall(r">Blocker \d</a>", row)) == 3
    assert '#dependencies">2 more</a>' in row


def test_the_status_filter_reaches_done_and_cancelled_tasks_and_their_receipts(
    world: World, client: Client
):
    shipped = make(world, "Shipped")
    move(
        world,
        shipped,
        "in_progress",
        "done",
        work_receipt={"session_ref": "s-done", "summary": "Shipped it."},
    )
    dropped = make(world, "Dropped")
    move(world, dropped, "cancelled")
    make(world, "Still open")
    client.force_login(world.viewer)
    board = client.get("/projects/alpha/").content.decode()
    assert "Shipped" not in board
    assert "Dropped" not in board
    filters = board[board.index('aria-label="Task status"') :]
    assert 'href="/projects/alpha/?status=done">Done (1)</a>' in filters
    assert 'href="/projects/alpha/?status=cancelled">Cancelled (1)</a>' in filters
    assert 'aria-current="page">Open (1)</a>' in filters
    done = client.get("/projects/alpha/?status=done").content.decode()
    assert '<h2 id="tasks-heading">Done tasks</h2>' in done
    assert f'href="/projects/alpha/tasks/{shipped["id"]}/">Shipped</a>' in done
    assert "Still open" not in done
    cancelled = client.get("/projects/alpha/?status=cancelled").content.decode()
    assert '<span class="badge status-cancelled">cancelled</span>' in cancelled
    receipts = client.get(f"/projects/alpha/tasks/{shipped['id']}/").content.decode()
    assert "Shipped it." in receipts
    assert "s-done" in receipts
    everything = client.get("/projects/alpha/?status=all").content.decode()
    assert all(name in everything for name in ("Shipped", "Dropped", "Still open"))


def test_an_unknown_status_is_named_and_open_tasks_are_shown(world: World, client: Client):
    make(world, "Open one")
    client.force_login(world.viewer)
    response = client.get("/projects/alpha/?status=finished")
    assert response.status_code == 400
    html = response.content.decode()
    assert "There is no task status “finished”: open tasks are shown instead." in html
    assert ">Open one</a>" in html


def test_a_cut_list_says_how_many_more_follow(world: World, client: Client):
    for n in range(35):
        make(world, f"Task number {n}")
    client.force_login(world.viewer)
    html = client.get("/projects/alpha/").content.decode()
    assert "30 open tasks, and 5 more, newest first" in html
    older = re.search(r'href="\?after=([^"]+)">Older tasks: 5 more</a>', html)
    assert older is not None
    rest = client.get(f"/projects/alpha/?after={older.group(1)}").content.decode()
    assert "5 open tasks, newest first (an older page)" in rest
    assert "Older tasks" not in rest
