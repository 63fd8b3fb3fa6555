"""Safe retries the HTTP way (the IETF Idempotency-Key draft): the same key and payload replay
the first response and say so, another payload is 422, a key where none is taken is 400."""

from __future__ import annotations

from typing import Any

import pytest

from audit.models import AuditEvent
from continuity.models import Memory, Task
from tests.continuity.api.helpers import Api, error_of
from tests.factories import World

KEY = {"Idempotency-Key": "retry-1"}


def note(api: Api, content: str = "The staging database resets nightly.") -> dict[str, Any]:
    return {"write_context": api.write_context(), "kind": "note", "content": content}


@pytest.mark.parametrize(
    ("path", "operation", "model"),
    [("memories", "memory_add", Memory), ("tasks", "task_create", Task)],
)
def test_it_replays_the_first_response_and_says_so(
    world: World, owner_api: Api, path: str, operation: str, model: Any
):
    body = (
        note(owner_api)
        if path == "memories"
        else {"write_context": owner_api.write_context(), "title": "t", "description": "d"}
    )
    first = owner_api.call("POST", path, body, **KEY)
    again = owner_api.call("POST", path, body, **KEY)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers["Location"] == first.headers["Location"]
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert model.objects.count() == 1
    outcomes = AuditEvent.objects.filter(operation=operation)
    assert sorted(outcomes.values_list("outcome", flat=True)) == ["replayed", "success"]


def test_it_refuses_the_key_with_another_payload(world: World, owner_api: Api):
    owner_api.call("POST", "memories", note(owner_api), **KEY)
    answer = owner_api.call("POST", "memories", note(owner_api, "Something else."), **KEY)
    assert (answer.status_code, error_of(answer)["code"]) == (422, "idempotency_conflict")
    assert Memory.objects.count() == 1


def test_it_refuses_a_key_where_none_is_taken_and_audits_it(world: World, owner_api: Api):
    task_id = owner_api.call(
        "POST",
        "tasks",
        {"write_context": owner_api.write_context(), "title": "t", "description": "d"},
    ).json()["id"]
    update = {"write_context": owner_api.write_context(), "status": "in_progress"}
    for method, path, body in (
        ("GET", "identity", None),
        ("GET", f"tasks/{task_id}", None),
        ("PATCH", f"tasks/{task_id}", update),
    ):
        answer = owner_api.call(method, path, body, **KEY, **{"If-Match": '"1"'})
        error = error_of(answer)
        assert (answer.status_code, error["fields"]) == (
            400,
            {"Idempotency-Key": "this request cannot take one"},
        ), path
    assert Task.objects.get(pk=task_id).version == 1
    assert AuditEvent.objects.filter(
        operation="task_update", error_code="validation_error"
    ).exists()


def test_it_refuses_the_key_in_the_body(world: World, owner_api: Api):
    answer = owner_api.call("POST", "memories", {**note(owner_api), "idempotency_key": "k"})
    assert error_of(answer)["fields"] == {"idempotency_key": "goes in the Idempotency-Key header"}


def test_it_refuses_a_malformed_key(world: World, owner_api: Api):
    answer = owner_api.call("POST", "memories", note(owner_api), **{"Idempotency-Key": ""})
    assert (answer.status_code, list(error_of(answer)["fields"])) == (400, ["idempotency_key"])
