"""task_list: tasks newest first, by status, a page at a time with an opaque cursor."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import pytest

from continuity.models import Task
from continuity.selectors import task_list
from core.access import Caller
from tests.continuity.helpers import as_json, new_task, rejected, update_task
from tests.factories import World


def _all_pages(caller: Caller, **arguments: Any) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        result = as_json(task_list(caller, cursor=cursor, **arguments))
        pages.append([task["title"] for task in result["tasks"]])
        cursor = result["next_cursor"]
        if cursor is None:
            return pages


def test_it_lists_tasks_newest_first(world: World) -> None:
    owner = world.caller("owner")
    for n in range(3):
        new_task(owner, f"t{n}")
    result = as_json(task_list(world.caller("viewer")))
    assert [task["title"] for task in result["tasks"]] == ["t2", "t1", "t0"]
    assert result["next_cursor"] is None
    first = result["tasks"][0]
    assert set(first) == {
        "id",
        "title",
        "status",
        "version",
        "next_step",
        "blocker_count",
        "repository_ref",
        "blocked_by",
        "ready",
        "created_at",
        "updated_at",
    }


def test_it_pages_through_every_task_once(world: World) -> None:
    owner = world.caller("owner")
    for n in range(25):
        new_task(owner, f"t{n:02}")
    pages = _all_pages(owner, limit=10)
    assert [len(page) for page in pages] == [10, 10, 5]
    assert [title for page in pages for title in page] == [f"t{n:02}" for n in range(24, -1, -1)]


def test_a_last_full_page_has_no_next_cursor(world: World) -> None:
    owner = world.caller("owner")
    for n in range(4):
        new_task(owner, f"t{n}")
    assert [len(page) for page in _all_pages(owner, limit=2)] == [2, 2]


def test_tasks_created_at_the_same_instant_are_all_listed_once(world: World) -> None:
    owner = world.caller("owner")
    for n in range(7):
        new_task(owner, f"t{n}")
    Task.objects.update(created_at=datetime(2026, 1, 1, 12, 0, tzinfo=UTC))
    titles = [title for page in _all_pages(owner, limit=3) for title in page]
    assert sorted(titles) == [f"t{n}" for n in range(7)]
    expected = [t.title for t in Task.objects.order_by("-created_at", "-id")]
    assert titles == expected


def test_it_keeps_the_order_of_creation_when_tasks_are_updated(world: World) -> None:
    owner = world.caller("owner")
    first = new_task(owner, "first")
    new_task(owner, "second")
    update_task(owner, first, next_step="touched")
    assert [task["title"] for task in as_json(task_list(owner))["tasks"]] == ["second", "first"]


def test_it_filters_by_status_and_by_open(world: World) -> None:
    owner = world.caller("owner")
    for status in ("todo", "in_progress", "blocked"):
        new_task(owner, status, status=status)
    for status in ("done", "cancelled"):
        task = new_task(owner, status, status="in_progress")
        update_task(owner, task, status=status)

    def titles(status: str) -> list[str]:
        return sorted(task["title"] for task in as_json(task_list(owner, status=status))["tasks"])

    assert titles("open") == ["blocked", "in_progress", "todo"]
    for status in ("todo", "in_progress", "blocked", "done", "cancelled"):
        assert titles(status) == [status]


def test_a_cursor_pages_within_a_status(world: World) -> None:
    owner = world.caller("owner")
    for n in range(6):
        new_task(owner, f"open{n}")
        task = new_task(owner, f"closed{n}", status="in_progress")
        update_task(owner, task, status="done")
    pages = _all_pages(owner, status="done", limit=4)
    assert [len(page) for page in pages] == [4, 2]
    assert all(title.startswith("closed") for page in pages for title in page)


def test_the_list_texts_are_clipped(world: World) -> None:
    owner = world.caller("owner")
    new_task(owner, next_step="step " * 400)
    item = as_json(task_list(owner))["tasks"][0]
    assert len(item["next_step"].encode()) <= 280
    assert item["next_step"].endswith("…")


def _cursor(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


UUID = "5f2b8f0e-0000-4000-8000-000000000000"
BAD_CURSORS = {
    "garbage": "not a cursor!",
    "not ascii": "é" * 10,
    "bad padding": "a",
    "no separator": _cursor("2026-01-01T00:00:00+00:00"),
    "bad time": _cursor(f"yesterday|{UUID}"),
    "naive time": _cursor(f"2026-01-01T00:00:00|{UUID}"),
    "bad id": _cursor("2026-01-01T00:00:00+00:00|nope"),
    "binary": base64.urlsafe_b64encode(b"\xff\xfe\x00\x01").decode(),
    "year after 9999 in utc": _cursor(f"9999-12-31T23:59:59-14:00|{UUID}"),
    "year before 1 in utc": _cursor(f"0001-01-01T00:00:00+14:00|{UUID}"),
}


@pytest.mark.parametrize("cursor", BAD_CURSORS.values(), ids=BAD_CURSORS.keys())
def test_it_rejects_a_cursor_it_did_not_make(world: World, cursor: str) -> None:
    owner = world.caller("owner")
    new_task(owner)
    error = rejected("validation_error", task_list, owner, cursor=cursor)
    assert error.details["fields"] == {"cursor": "is not a cursor returned by task_list"}


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"cursor": "c" * 201}, "cursor"),
        ({"cursor": 5}, "cursor"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": "10"}, "limit"),
        ({"limit": 2**64}, "limit"),
        ({"status": "finished"}, "status"),
    ],
)
def test_it_rejects_bad_arguments(world: World, arguments: dict[str, Any], field: str) -> None:
    error = rejected("validation_error", task_list, world.caller("owner"), **arguments)
    assert list(error.details["fields"]) == [field]
