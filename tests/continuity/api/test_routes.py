"""One operation table: every operation has a REST route, every MCP tool is a row of it, and
every REST result is what the row's output model says (strictly, as JSON)."""

from __future__ import annotations

import json

from continuity.api.routes import ROUTES
from continuity.catalog import CATALOG, OPERATIONS
from continuity.mcp.tools import TOOLS
from tests.continuity.api.helpers import Api
from tests.factories import World


def test_every_operation_has_a_route_and_every_tool_a_row():
    assert {route.operation_name for route in ROUTES} == set(OPERATIONS)
    assert set(TOOLS) == {spec.name for spec in CATALOG if spec.mcp}
    for name, tool in TOOLS.items():
        assert tool.spec is OPERATIONS[name]


def test_every_route_answers_with_its_output_model(world: World, owner_api: Api):
    context = owner_api.write_context()
    memory = owner_api.call(
        "POST",
        "memories",
        {
            "write_context": context,
            "kind": "decision",
            "content": "c",
            "rationale": "r",
            "source": "s",
        },
    )
    task = owner_api.call(
        "POST", "tasks", {"write_context": context, "title": "t", "description": "d"}
    )
    task_id, memory_id = task.json()["id"], memory.json()["id"]
    update = owner_api.call(
        "PATCH",
        f"tasks/{task_id}",
        {
            "write_context": context,
            "status": "in_progress",
            "work_receipt": {"session_ref": "s", "summary": "x"},
        },
        **{"If-Match": '"1"'},
    )
    ready = owner_api.call(
        "POST", "tasks", {"write_context": context, "title": "r", "description": "d"}
    )
    claim = owner_api.call("POST", "tasks/claim", {"write_context": context})
    assert claim.json()["task"]["id"] == ready.json()["id"]
    state = owner_api.call(
        "PUT", "state/codex", {"write_context": context, "body": "# Running summary\n- goal"}
    )
    # The claim above holds a lease for its actor (it named no session_ref): renewed, then ended.
    heartbeat = owner_api.call(
        "POST", f"tasks/{task_id}/heartbeat", {"write_context": context, "session_ref": "s"}
    )
    released = owner_api.call("DELETE", f"tasks/{task_id}/lease")
    assert released.json()["released"]["holder"]["session_ref"] == ""
    answers = {
        "task_heartbeat": heartbeat,
        "task_lease_release": released,
        "memory_add": memory,
        "task_create": task,
        "task_update": update,
        "task_claim_next": claim,
        "state_put": state,
        "server_identity": owner_api.get("identity"),
        "continuity_context": owner_api.get("context?agent=codex"),
        "memory_list": owner_api.get("memories"),
        "memory_get": owner_api.get(f"memories/{memory_id}"),
        "memory_search": owner_api.get("memories/search?query=c"),
        "task_list": owner_api.get("tasks?status=open"),
        "task_get": owner_api.get(f"tasks/{task_id}"),
        "receipt_list": owner_api.get(f"tasks/{task_id}/receipts"),
        "state_get": owner_api.get("state/codex"),
    }
    assert set(answers) == set(OPERATIONS)
    for name, answer in answers.items():
        route = next(r for r in ROUTES if r.operation_name == name)
        assert answer.status_code == route.status, (name, answer.json())
        assert answer.headers["Content-Type"] == "application/json"
        OPERATIONS[name].output_model.model_validate_json(json.dumps(answer.json()), strict=True)
