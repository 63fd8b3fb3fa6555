"""Every operation's result is what its output model (continuity.outputs) says, field for field,
and every pinned error is what the tool error schema says: the models generate the tools'
outputSchemas, which SDK clients hold every structuredContent to."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pydantic
import pytest

from continuity.mcp.schemas import TOOL_ERROR, output_schema
from continuity.mcp.tools import TOOLS
from continuity.outputs import TaskAckOut
from continuity.selectors import (
    continuity_context,
    memory_get,
    memory_search,
    server_identity,
    state_get,
    task_get,
    task_list,
)
from continuity.services import state_put
from core.errors import Forbidden, HeyAiraError
from tests.continuity.helpers import add_decision, add_note, as_json, new_task, receipt, update_task
from tests.continuity.test_error_codes import SCENARIOS
from tests.factories import World, wc


def fits(tool: str, result: dict[str, Any]) -> None:
    """Valid for the output model (strict, as JSON) and for the advertised schema."""
    spec = TOOLS[tool].spec
    spec.output_model.model_validate_json(json.dumps(result), strict=True)
    jsonschema.Draft202012Validator(
        output_schema(spec.output_model),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    ).validate(result)


@pytest.fixture
def busy(world: World) -> dict[str, Any]:
    """A project with a superseded decision, a note, tasks with handoffs and receipts, and a
    running summary: every optional part of every result is present somewhere."""
    owner = world.caller("owner")
    old = add_decision(owner, "We deploy by hand.", title="Deploys")
    new = add_decision(owner, "We deploy from CI.", title="Deploys", supersedes=old["id"])
    note = add_note(owner, "The staging database is reset nightly.", title="Staging")
    task = new_task(
        owner, repository_ref={"repository": "acme/app", "branch": "main", "commit": "abc1234"}
    )
    updated = update_task(
        owner,
        task,
        status="in_progress",
        blockers=["CI is red"],
        handoff_note="Half done.",
        work_receipt=receipt(
            tests=[{"name": "pytest", "result": "passed"}, {"name": "ruff", "result": "failed"}],
            commits=["abc1234"],
            blockers=["CI is red"],
        ),
    )
    new_task(owner, title="Second task")
    state = as_json(
        state_put(owner, write_context=wc(owner), agent="codex", body="# Running summary\n- goal")
    )
    return {"old": old, "new": new, "note": note, "task": task, "updated": updated, "state": state}


def test_every_tool_result_fits_its_output_model(world: World, busy: dict[str, Any]):
    owner = world.caller("owner")
    fits("memory_add", busy["new"])
    fits("memory_add", busy["note"])
    fits("task_create", busy["task"])
    fits("task_update", busy["updated"])
    fits("state_put", busy["state"])
    fits("server_identity", as_json(server_identity(owner)))
    fits("continuity_context", as_json(continuity_context(owner)))
    fits("continuity_context", as_json(continuity_context(owner, memory_limit=500, agent="codex")))
    fits("memory_get", as_json(memory_get(owner, memory_id=busy["old"]["id"])))
    fits("memory_get", as_json(memory_get(owner, memory_id=busy["note"]["id"])))
    fits("memory_search", as_json(memory_search(owner, query="deploy")))
    fits("task_get", as_json(task_get(owner, task_id=busy["task"]["id"])))
    first_page = as_json(task_list(owner, limit=1))
    assert first_page["next_cursor"] is not None
    fits("task_list", first_page)
    fits("task_list", as_json(task_list(owner, status="open", cursor=first_page["next_cursor"])))
    fits("state_get", as_json(state_get(owner, agent="codex")))


def test_a_task_update_without_a_receipt_fits_too(world: World, busy: dict[str, Any]):
    owner = world.caller("owner")
    task = busy["updated"]["task"]
    fits("task_update", update_task(owner, task, status="done", repository_ref={}))


def test_a_result_with_a_field_the_model_does_not_name_is_refused(busy: dict[str, Any]):
    with pytest.raises(pydantic.ValidationError):
        TaskAckOut.model_validate_json(json.dumps({**busy["task"], "secret": "x"}), strict=True)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**busy["task"], "secret": "x"}, output_schema(TaskAckOut))


@pytest.mark.parametrize("code", SCENARIOS)
def test_every_pinned_error_fits_the_tool_error_schema(world: World, code: str):
    service, caller, arguments = SCENARIOS[code](world)
    with pytest.raises(HeyAiraError) as caught:
        service(caller, **arguments)
    assert caught.value.code == code
    jsonschema.Draft202012Validator(TOOL_ERROR).validate({"error": caught.value.as_dict()})
    # ... and so every tool's outputSchema takes it.
    jsonschema.validate({"error": caught.value.as_dict()}, output_schema(TaskAckOut))


def test_the_step_up_and_outage_errors_fit_the_tool_error_schema():
    step_up = Forbidden("Needs a scope.", required_scopes=["continuity:write"])
    outage = {"code": "unavailable", "message": "Retry.", "retry_after": 2}
    for error in (step_up.as_dict(), outage):
        jsonschema.Draft202012Validator(TOOL_ERROR).validate({"error": error})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"error": {"code": "teapot", "message": "?"}}, TOOL_ERROR)
