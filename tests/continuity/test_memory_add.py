"""memory_add: decisions and notes, immutable, with idempotent retries."""

from __future__ import annotations

from typing import Any

import pytest

from audit.models import AuditEvent
from continuity.models import MEMORY_CONTENT_MAX, IdempotencyRecord, Memory
from continuity.selectors import memory_get
from continuity.services import memory_add, task_create
from tests.continuity.helpers import (
    add_decision,
    add_note,
    as_json,
    audit_rows,
    last_audit,
    rejected,
)
from tests.factories import World, wc


def test_it_records_a_note_and_answers_with_its_id(world: World) -> None:
    contributor = world.caller("contributor")
    result = add_note(contributor, "The CI runs on both databases.", title="CI")
    memory = Memory.objects.get()
    assert result == {
        "id": str(memory.pk),
        "kind": "note",
        "title": "CI",
        "supersedes": None,
        "created_at": result["created_at"],
    }
    assert result["created_at"].endswith("Z")
    assert (memory.project, memory.content, memory.author) == (
        world.alpha,
        "The CI runs on both databases.",
        "carla",
    )
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.target_type, event.target_id) == (
        "memory_add",
        "success",
        "memory",
        str(memory.pk),
    )


def test_it_records_a_decision_with_its_rationale_and_source(world: World) -> None:
    owner = world.caller("owner")
    result = add_decision(owner, "Use UUID keys.", rationale="No guessable ids.", source="PR 7")
    full = as_json(memory_get(owner, memory_id=result["id"]))["memory"]
    assert (full["kind"], full["content"], full["rationale"], full["source"]) == (
        "decision",
        "Use UUID keys.",
        "No guessable ids.",
        "PR 7",
    )


@pytest.mark.parametrize("missing", ["rationale", "source"])
def test_it_rejects_a_decision_without_rationale_or_source(world: World, missing: str) -> None:
    owner = world.caller("owner")
    arguments = {"rationale": "why", "source": "where", missing: "   "}
    error = rejected(
        "validation_error",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="decision",
        content="Use UUID keys.",
        **arguments,
    )
    assert error.details["fields"] == {missing: "is required for a decision"}
    assert not Memory.objects.exists()
    event = last_audit(world.alpha)
    assert (event.outcome, event.error_code) == ("rejected", "validation_error")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": " \n\t "}, "content"),
        ({"content": "x" * (MEMORY_CONTENT_MAX + 1)}, "content"),
        ({"title": "t" * 201}, "title"),
        ({"kind": "poem"}, "kind"),
        ({"source": "s" * 501}, "source"),
        ({"rationale": "r" * 4001}, "rationale"),
        ({"idempotency_key": "has space"}, "idempotency_key"),
        ({"idempotency_key": ""}, "idempotency_key"),
        ({"idempotency_key": "k" * 201}, "idempotency_key"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_it_rejects_bad_input_naming_the_field(
    world: World, changes: dict[str, Any], field: str
) -> None:
    owner = world.caller("owner")
    arguments = {"write_context": wc(owner), "kind": "note", "content": "ok", **changes}
    error = rejected("validation_error", memory_add, owner, **arguments)
    assert list(error.details["fields"]) == [field]
    assert not Memory.objects.exists()


def test_it_accepts_content_of_exactly_the_maximum_length(world: World) -> None:
    owner = world.caller("owner")
    result = add_note(owner, "é" * MEMORY_CONTENT_MAX)
    assert len(Memory.objects.get(pk=result["id"]).content) == MEMORY_CONTENT_MAX


def test_a_retry_with_the_same_key_and_payload_returns_the_original_result(world: World) -> None:
    owner = world.caller("owner")
    first = add_note(owner, "Deploys are on Tuesdays.", idempotency_key="note-1")
    again = add_note(owner, "Deploys are on Tuesdays.", idempotency_key="note-1")
    assert again == first
    assert Memory.objects.count() == 1
    events = audit_rows(world.alpha, "memory_add")
    assert [(e.outcome, e.target_id) for e in events] == [
        ("success", first["id"]),
        ("replayed", first["id"]),
    ]


def test_a_retry_from_another_member_of_the_project_replays_too(world: World) -> None:
    first = add_note(world.caller("owner"), "same", idempotency_key="shared")
    assert add_note(world.caller("contributor"), "same", idempotency_key="shared") == first
    assert Memory.objects.count() == 1


def test_it_rejects_the_same_key_with_another_payload(world: World) -> None:
    owner = world.caller("owner")
    add_note(owner, "Deploys are on Tuesdays.", idempotency_key="note-1")
    error = rejected(
        "idempotency_conflict",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="note",
        content="Deploys are on Wednesdays.",
        idempotency_key="note-1",
    )
    assert error.message.startswith("This idempotency_key was already used")
    assert Memory.objects.count() == 1
    event = last_audit(world.alpha)
    assert (event.operation, event.outcome, event.error_code) == (
        "memory_add",
        "rejected",
        "idempotency_conflict",
    )


@pytest.mark.parametrize(
    "change",
    [{"title": "other"}, {"kind": "decision", "rationale": "r", "source": "s"}],
)
def test_any_change_in_the_payload_is_a_conflict(world: World, change: dict[str, Any]) -> None:
    owner = world.caller("owner")
    add_note(owner, "same content", idempotency_key="k")
    arguments = {"write_context": wc(owner), "kind": "note", "content": "same content"}
    arguments["idempotency_key"] = "k"
    rejected("idempotency_conflict", memory_add, owner, **{**arguments, **change})


def test_an_omitted_default_and_an_explicit_one_are_the_same_payload(world: World) -> None:
    owner = world.caller("owner")
    first = add_note(owner, "same", idempotency_key="k")
    assert add_note(owner, "same", idempotency_key="k", title="", supersedes=None) == first


def test_keys_belong_to_one_project(world: World) -> None:
    alpha = add_note(world.caller("owner"), "same", idempotency_key="k")
    beta = add_note(world.caller("outsider"), "same", idempotency_key="k")
    assert alpha["id"] != beta["id"]
    assert Memory.objects.filter(project=world.beta).count() == 1


def test_keys_belong_to_one_operation(world: World) -> None:
    owner = world.caller("owner")
    add_note(owner, "same", idempotency_key="k")
    task = as_json(
        task_create(owner, write_context=wc(owner), title="t", description="d", idempotency_key="k")
    )
    assert task["version"] == 1


def test_the_key_keeps_a_fingerprint_and_the_result_never_the_payload(world: World) -> None:
    owner = world.caller("owner")
    result = add_note(owner, "secret-ish content", title="T", idempotency_key="k")
    record = IdempotencyRecord.objects.get()
    assert (record.project, record.operation, record.key) == (world.alpha, "memory_add", "k")
    assert len(record.fingerprint) == 64
    assert int(record.fingerprint, 16) >= 0
    assert record.result == result
    assert "secret-ish content" not in str(record.result)


def test_a_rejected_first_use_does_not_burn_the_key(world: World) -> None:
    owner = world.caller("owner")
    rejected(
        "not_found",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="decision",
        content="Replace it.",
        rationale="r",
        source="s",
        supersedes="5f2b8f0e-0000-4000-8000-000000000000",
        idempotency_key="k",
    )
    assert not IdempotencyRecord.objects.exists()
    add_note(owner, "Now something else.", idempotency_key="k")
    assert Memory.objects.count() == 1


def test_each_call_is_one_audit_event(world: World) -> None:
    owner = world.caller("owner")
    before = AuditEvent.objects.count()
    add_note(owner, "a", idempotency_key="k")
    add_note(owner, "a", idempotency_key="k")
    rejected(
        "idempotency_conflict",
        memory_add,
        owner,
        write_context=wc(owner),
        kind="note",
        content="b",
        idempotency_key="k",
    )
    rejected("validation_error", memory_add, owner, write_context=wc(owner), kind="note")
    assert AuditEvent.objects.count() == before + 4
