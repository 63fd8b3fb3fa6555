"""Every pinned error code answers with its REST status (docs/architecture.md, "Error codes"), in
the MCP error body, and is audited with its code."""

from __future__ import annotations

import uuid

from django.test import Client

from audit.models import AuditEvent
from continuity.api.errors import STATUS_BY_CODE
from core.errors import ERROR_CODES
from tests.continuity.api.helpers import Api, api_for, error_of
from tests.factories import World


def task(api: Api, **fields: object) -> dict:
    body = {"write_context": api.write_context(), "title": "t", "description": "d", **fields}
    answer = api.call("POST", "tasks", body)
    assert answer.status_code == 201, answer.json()
    return answer.json()


def last_rejection(operation: str) -> AuditEvent:
    event = AuditEvent.objects.filter(operation=operation).order_by("-occurred_at").first()
    assert event is not None
    return event


def test_the_status_table_covers_every_pinned_code():
    assert set(STATUS_BY_CODE) == set(ERROR_CODES)
    assert STATUS_BY_CODE["unavailable"] == 503


def test_it_answers_401_without_a_credential(world: World):
    answer = Client().get("/api/v1/identity")
    assert answer.status_code == 401
    assert error_of(answer)["code"] == "unauthenticated"
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_it_answers_403_to_a_viewer_who_writes(world: World, viewer_api: Api):
    answer = viewer_api.call(
        "POST", "memories", {"write_context": viewer_api.write_context(), "kind": "note"}
    )
    assert (answer.status_code, error_of(answer)["code"]) == (403, "forbidden")
    assert last_rejection("memory_add").error_code == "forbidden"


def test_it_answers_404_for_another_projects_task(world: World, owner_api: Api):
    theirs = task(api_for(world, "outsider"))
    for path in (f"tasks/{theirs['id']}", f"tasks/{uuid.uuid4()}"):
        answer = owner_api.get(path)
        assert (answer.status_code, error_of(answer)["code"]) == (404, "not_found")
    assert last_rejection("task_get").error_code == "not_found"


def test_it_answers_400_with_the_fields_for_bad_input(world: World, owner_api: Api):
    answer = owner_api.call(
        "POST", "tasks", {"write_context": owner_api.write_context(), "title": ""}
    )
    error = error_of(answer)
    assert (answer.status_code, error["code"]) == (400, "validation_error")
    assert set(error["fields"]) == {"title", "description"}
    assert last_rejection("task_create").error_code == "validation_error"


def test_it_answers_403_to_the_mcp_write_context(world: World, owner_api: Api):
    mcp_context = world.caller("owner").write_context.as_dict()
    answer = owner_api.call(
        "POST", "tasks", {"write_context": mcp_context, "title": "t", "description": "d"}
    )
    error = error_of(answer)
    assert (answer.status_code, error["code"]) == (403, "write_context_mismatch")
    assert error["mismatched"] == ["resource"]


def test_it_answers_409_to_a_move_out_of_done(world: World, owner_api: Api):
    made = task(owner_api, status="in_progress")
    context = owner_api.write_context()
    done = owner_api.call(
        "PATCH",
        f"tasks/{made['id']}",
        {"write_context": context, "status": "done"},
        **{"If-Match": '"1"'},
    )
    assert done.status_code == 200
    answer = owner_api.call(
        "PATCH",
        f"tasks/{made['id']}",
        {"write_context": context, "status": "todo"},
        **{"If-Match": '"2"'},
    )
    assert (answer.status_code, error_of(answer)["code"]) == (409, "invalid_transition")


def test_it_answers_409_to_a_second_receipt_of_a_session(world: World, owner_api: Api):
    made = task(owner_api)
    body = {
        "write_context": owner_api.write_context(),
        "next_step": "go on",
        "work_receipt": {"session_ref": "s-1", "summary": "did it"},
    }
    first = owner_api.call("PATCH", f"tasks/{made['id']}", body, **{"If-Match": '"1"'})
    assert first.status_code == 200
    again = owner_api.call("PATCH", f"tasks/{made['id']}", body, **{"If-Match": '"2"'})
    assert (again.status_code, error_of(again)["code"]) == (409, "duplicate_receipt")
    assert last_rejection("task_update").error_code == "duplicate_receipt"


def test_it_answers_an_unknown_path_with_the_error_body(world: World, owner_api: Api):
    for path in ("nope", "tasks/a/b/c", "memories/search/more"):
        answer = owner_api.get(path)
        assert (answer.status_code, error_of(answer)["code"]) == (404, "not_found"), path
