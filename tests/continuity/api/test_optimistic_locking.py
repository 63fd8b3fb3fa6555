"""Versions the HTTP way: ETag sends the version, If-Match carries expected_version; a stale one
is 412 with current_version, a missing one on a task update is 428 (code validation_error)."""

from __future__ import annotations

from audit.models import AuditEvent
from continuity.models import Task
from tests.continuity.api.helpers import Api, error_of
from tests.factories import World


def new_task(api: Api) -> str:
    body = {"write_context": api.write_context(), "title": "t", "description": "d"}
    return api.call("POST", "tasks", body).json()["id"]


def claim(api: Api, task_id: str, **headers: str):
    body = {"write_context": api.write_context(), "status": "in_progress"}
    return api.call("PATCH", f"tasks/{task_id}", body, **headers)


def test_it_sends_the_version_as_an_etag(world: World, owner_api: Api):
    task_id = new_task(owner_api)
    assert owner_api.get(f"tasks/{task_id}").headers["ETag"] == '"1"'
    answer = claim(owner_api, task_id, **{"If-Match": '"1"'})
    assert answer.status_code == 200
    assert answer.headers["ETag"] == '"2"'
    assert answer.json()["task"]["version"] == 2


def test_it_refuses_a_stale_if_match_with_the_current_version(world: World, owner_api: Api):
    task_id = new_task(owner_api)
    claim(owner_api, task_id, **{"If-Match": '"1"'})
    answer = claim(owner_api, task_id, **{"If-Match": '"1"'})
    error = error_of(answer)
    assert (answer.status_code, error["code"], error["current_version"]) == (
        412,
        "stale_version",
        2,
    )
    assert Task.objects.get(pk=task_id).version == 2


def test_it_requires_if_match_on_an_update_and_audits_the_refusal(world: World, owner_api: Api):
    task_id = new_task(owner_api)
    answer = claim(owner_api, task_id)
    error = error_of(answer)
    assert (answer.status_code, error["code"]) == (428, "validation_error")
    assert error["fields"] == {"If-Match": "is required"}
    event = AuditEvent.objects.filter(operation="task_update").get()
    assert (event.outcome, event.error_code) == ("rejected", "validation_error")
    assert Task.objects.get(pk=task_id).version == 1


def test_it_refuses_a_malformed_if_match(world: World, owner_api: Api):
    task_id = new_task(owner_api)
    for given in ("*", 'W/"1"', '"1", "2"', '"x"', " 1"):
        answer = claim(owner_api, task_id, **{"If-Match": given})
        assert (answer.status_code, error_of(answer)["fields"]) == (
            400,
            {"If-Match": 'must be one entity tag as ETag sent it, such as "3"'},
        ), given


def test_it_refuses_expected_version_in_the_body(world: World, owner_api: Api):
    task_id = new_task(owner_api)
    body = {"write_context": owner_api.write_context(), "status": "done", "expected_version": 1}
    answer = owner_api.call("PATCH", f"tasks/{task_id}", body, **{"If-Match": '"1"'})
    assert error_of(answer)["fields"] == {"expected_version": "goes in the If-Match header"}


def test_a_state_put_takes_if_match_as_its_expected_version(world: World, owner_api: Api):
    body = {"write_context": owner_api.write_context(), "body": "# Running summary\n- goal"}
    first = owner_api.call("PUT", "state/codex", body)
    assert (first.status_code, first.headers["ETag"]) == (201, '"1"')
    assert owner_api.get("state/codex").headers["ETag"] == '"1"'
    stale = owner_api.call("PUT", "state/codex", body, **{"If-Match": '"0"'})
    assert (stale.status_code, error_of(stale)["current_version"]) == (412, 1)
    second = owner_api.call("PUT", "state/codex", body, **{"If-Match": '"1"'})
    assert (second.status_code, second.headers["ETag"]) == (201, '"2"')
