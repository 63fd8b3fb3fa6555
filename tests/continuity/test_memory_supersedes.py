"""A new decision may supersede an older one: once, and only a decision of this project."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import RestrictedError

from continuity.models import Memory
from continuity.selectors import memory_get
from continuity.services import memory_add
from tests.continuity.helpers import add_decision, add_note, as_json, last_audit, rejected
from tests.factories import World, wc

MISSING = "5f2b8f0e-0000-4000-8000-000000000000"


def _supersede(
    caller: Any, old_id: str, content: str = "Use SQLite only for the quick start."
) -> Any:
    return add_decision(caller, content, supersedes=old_id)


def test_a_new_decision_supersedes_an_older_one(world: World) -> None:
    owner = world.caller("owner")
    old = add_decision(owner, "Use SQLite everywhere.")
    new = _supersede(owner, old["id"])
    assert new["supersedes"] == old["id"]
    assert as_json(memory_get(owner, memory_id=old["id"]))["memory"]["superseded_by"] == new["id"]
    assert as_json(memory_get(owner, memory_id=new["id"]))["memory"]["superseded_by"] is None


def test_the_superseded_decision_stays_as_it_was(world: World) -> None:
    owner = world.caller("owner")
    old = add_decision(owner, "Use SQLite everywhere.")
    before = Memory.objects.values().get(pk=old["id"])
    _supersede(owner, old["id"])
    assert Memory.objects.values().get(pk=old["id"]) == before


def test_a_decision_is_superseded_at_most_once(world: World) -> None:
    owner = world.caller("owner")
    old = add_decision(owner, "Use SQLite everywhere.")
    _supersede(owner, old["id"])
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="decision",
        content="Use MySQL.",
        rationale="r",
        source="s",
        supersedes=old["id"],
    )
    assert error.details["fields"] == {
        "supersedes": "that decision is already superseded; supersede its successor"
    }
    assert Memory.objects.count() == 2


def test_the_successor_can_be_superseded_in_turn(world: World) -> None:
    owner = world.caller("owner")
    first = add_decision(owner, "v1")
    second = _supersede(owner, first["id"], "v2")
    third = _supersede(owner, second["id"], "v3")
    assert third["supersedes"] == second["id"]


def test_a_decision_cannot_supersede_a_note(world: World) -> None:
    owner = world.caller("owner")
    note = add_note(owner, "just a note")
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="decision",
        content="c",
        rationale="r",
        source="s",
        supersedes=note["id"],
    )
    assert error.details["fields"] == {"supersedes": "names a note; only decisions are superseded"}


def test_a_note_cannot_supersede_anything(world: World) -> None:
    owner = world.caller("owner")
    old = add_decision(owner, "v1")
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="note",
        content="c",
        supersedes=old["id"],
    )
    assert error.details["fields"] == {"supersedes": "only a decision can supersede another"}
    assert as_json(memory_get(owner, memory_id=old["id"]))["memory"]["superseded_by"] is None


def test_it_answers_not_found_for_a_decision_that_does_not_exist(world: World) -> None:
    owner = world.caller("owner")
    error = rejected(
        "not_found",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="decision",
        content="c",
        rationale="r",
        source="s",
        supersedes=MISSING,
    )
    assert error.message == "The memory named in supersedes does not exist in this project."
    assert not Memory.objects.exists()
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        "memory_add",
        "rejected",
        "not_found",
    )


def test_a_decision_of_another_project_cannot_be_superseded(world: World) -> None:
    outsider = world.caller("outsider")
    theirs = add_decision(outsider, "beta's decision")
    owner = world.caller("owner")
    error = rejected(
        "not_found",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="decision",
        content="c",
        rationale="r",
        source="s",
        supersedes=theirs["id"],
    )
    assert error.message == "The memory named in supersedes does not exist in this project."
    assert as_json(memory_get(outsider, memory_id=theirs["id"]))["memory"]["superseded_by"] is None


def test_a_project_with_superseded_decisions_can_be_deleted(world: World) -> None:
    """The chain of decisions goes with its project; alone, a superseded one cannot go."""
    owner = world.caller("owner")
    first = add_decision(owner, "v1")
    second = _supersede(owner, first["id"], "v2")
    _supersede(owner, second["id"], "v3")
    with pytest.raises(RestrictedError):
        Memory.objects.filter(pk=first["id"]).delete()
    add_note(world.caller("outsider"), "beta keeps its notes")
    world.alpha.delete()
    assert list(Memory.objects.values_list("project__slug", flat=True)) == ["beta"]
