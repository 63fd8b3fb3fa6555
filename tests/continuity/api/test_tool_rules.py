"""The rules the MCP tool schemas leave to the server (they cannot sit at a schema's root), over
REST: a decision needs rationale and source; an update must change something. Each refusal is a
400 validation_error whose message says what to send
(tests/continuity/mcp/test_tool_schema_portability.py has the same over MCP)."""

from __future__ import annotations

from tests.continuity.api.helpers import Api, error_of


def test_a_decision_without_rationale_and_source_is_refused_with_what_to_send(owner_api: Api):
    body = {"write_context": owner_api.write_context(), "kind": "decision", "content": "x"}
    answer = owner_api.call("POST", "memories", {**body, "rationale": "Because."})
    assert answer.status_code == 400
    error = error_of(answer)
    assert error["code"] == "validation_error"
    assert error["fields"] == {"source": "is required for a decision"}
    assert error["message"] == (
        "A decision needs rationale (why) and source (where it was decided): send source, or "
        "record it as kind 'note'."
    )


def test_an_update_that_changes_nothing_is_refused_with_what_to_send(owner_api: Api):
    context = owner_api.write_context()
    created = owner_api.call(
        "POST", "tasks", {"write_context": context, "title": "t", "description": "d"}
    ).json()
    path = f"tasks/{created['id']}"
    for body in ({"write_context": context}, {"write_context": context, "status": None}):
        answer = owner_api.call("PATCH", path, body, **{"If-Match": '"1"'})
        assert answer.status_code == 400, answer.content
        error = error_of(answer)
        assert error["code"] == "validation_error"
        assert error["message"].startswith("Nothing to update: give at least one of status,")
        assert set(error["fields"]) == {"arguments"}
