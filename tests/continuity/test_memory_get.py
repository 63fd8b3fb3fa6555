"""memory_get: one memory in full, from this project only."""

from __future__ import annotations

import pytest

from continuity.selectors import memory_get
from tests.continuity.helpers import add_decision, as_json, last_audit, rejected
from tests.factories import World


def test_it_returns_the_whole_memory(world: World) -> None:
    owner = world.caller("owner")
    content = "line one\nline two " + "x" * 15_000
    added = add_decision(owner, content, title="Keys", rationale="why", source="PR 1")
    memory = as_json(memory_get(world.caller("viewer"), memory_id=added["id"]))["memory"]
    assert memory == {
        "id": added["id"],
        "kind": "decision",
        "title": "Keys",
        "content": content,
        "rationale": "why",
        "source": "PR 1",
        "supersedes": None,
        "superseded_by": None,
        "author": "olivia",
        "created_at": added["created_at"],
    }
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "memory_get",
        "success",
        "memory",
        added["id"],
    )


def test_it_answers_not_found_for_an_unknown_id(world: World) -> None:
    error = rejected(
        "not_found",
        memory_get,
        world.caller("viewer"),
        memory_id="5f2b8f0e-0000-4000-8000-000000000000",
    )
    assert error.message == "No such memory in this project."


@pytest.mark.parametrize("memory_id", ["not-a-uuid", 42, None, ""])
def test_it_rejects_an_id_that_is_not_a_uuid(world: World, memory_id: object) -> None:
    error = rejected("validation_error", memory_get, world.caller("viewer"), memory_id=memory_id)
    assert list(error.details["fields"]) == ["memory_id"]
