"""A credential can do over REST exactly what it can over MCP: a read-only key reads, and a
write is a step-up (403 with the missing scope and a challenge), audited before anything runs."""

from __future__ import annotations

from audit.models import AuditEvent
from continuity.models import Task
from tests.continuity.api.helpers import api_for, error_of
from tests.factories import World


def test_a_read_only_key_reads_and_is_asked_to_step_up_for_a_write(world: World):
    api = api_for(world, "contributor", ("continuity:read",))
    assert api.get("tasks").status_code == 200
    body = {"write_context": api.write_context(), "title": "t", "description": "d"}
    answer = api.call("POST", "tasks", body, **{"Idempotency-Key": "k"})
    error = error_of(answer)
    assert (answer.status_code, error["code"]) == (403, "forbidden")
    assert error["required_scopes"] == ["continuity:write"]
    assert "insufficient_scope" in answer.headers["WWW-Authenticate"]
    assert not Task.objects.exists()
    event = AuditEvent.objects.filter(operation="task_create").get()
    assert (event.outcome, event.error_code) == ("rejected", "forbidden")


def test_a_viewer_is_refused_a_write_before_its_input_is_read(world: World):
    api = api_for(world, "viewer", ("continuity:read",))
    answer = api.call("PATCH", "tasks/not-even-a-uuid", {"nonsense": True})
    assert (answer.status_code, error_of(answer)["code"]) == (403, "forbidden")
