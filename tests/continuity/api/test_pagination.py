"""Every list is paged by cursor: bounded pages, next_cursor in the body and a Link header, and
walking the pages yields every row once."""

from __future__ import annotations

import pytest

from tests.continuity.api.helpers import Api, error_of
from tests.continuity.test_read_query_counts import fill
from tests.factories import World

ROWS = 7


@pytest.fixture
def filled(world: World) -> str:
    return str(fill(world, ROWS)["task"])


@pytest.mark.parametrize(
    ("path", "items", "cap"),
    [
        ("memories", "memories", 100),
        ("tasks", "tasks", 100),
        ("tasks/{task}/receipts", "receipts", 50),
    ],
)
def test_it_walks_every_page_once(world: World, owner_api: Api, filled: str, path, items, cap):
    path = path.format(task=filled)
    seen: list[str] = []
    answer = owner_api.get(f"{path}?limit=3")
    while True:
        body = answer.json()
        assert len(body[items]) <= 3
        seen += [item["id"] for item in body[items]]
        if body["next_cursor"] is None:
            assert "Link" not in answer.headers
            break
        link = answer.headers["Link"]
        assert link == f'</api/v1/{path}?limit=3&cursor={body["next_cursor"]}>; rel="next"'
        answer = owner_api.get(f"{path}?limit=3&cursor={body['next_cursor']}")
    assert len(seen) == len(set(seen)) == ROWS
    too_many = owner_api.get(f"{path}?limit={cap + 1}")
    assert (too_many.status_code, list(error_of(too_many)["fields"])) == (400, ["limit"])
    forged = owner_api.get(f"{path}?cursor=bm90LWEtY3Vyc29y")
    assert list(error_of(forged)["fields"]) == ["cursor"]


def test_it_filters_memories_by_kind_and_tasks_by_status(world: World, owner_api: Api, filled: str):
    assert owner_api.get("memories?kind=decision").json() == {"memories": [], "next_cursor": None}
    assert len(owner_api.get("memories?kind=note").json()["memories"]) == ROWS
    assert owner_api.get("tasks?status=done").json()["tasks"] == []
    assert len(owner_api.get("tasks?status=open").json()["tasks"]) == ROWS


def test_it_refuses_an_unknown_query_parameter(world: World, owner_api: Api):
    answer = owner_api.get("tasks?colour=blue")
    assert (answer.status_code, list(error_of(answer)["fields"])) == (400, ["colour"])
