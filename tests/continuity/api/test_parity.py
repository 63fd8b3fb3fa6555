"""One continuity session, played once over MCP and once over REST, through the real ASGI
application: the results and the audit rows agree field by field.

Each transport works in a project of its own, set up alike (same owner, same repository), so
the two sessions start from the same state. Ids, times and the names of the two projects and
resources are the only differences allowed: each is replaced by a placeholder numbered in order
of first appearance, so that "the task created in step 3" must be the same task in every later
step on both sides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings

from audit.models import AuditEvent
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import Project
from tests.continuity.mcp.inprocess import InProcessServer, in_process_server
from tests.factories import bind_repository, build_world, make_project

# (step, tool, arguments without write_context, REST method, path, If-Match, Idempotency-Key)
Step = tuple[str, str, dict[str, Any], str, str, int | None, str | None]

TASK = {"title": "Ship the parser", "description": "Parse and test it."}
RECEIPT = {
    "session_ref": "session-1",
    "summary": "Wrote the parser.",
    "tests": [{"name": "pytest", "result": "passed"}],
    "commits": ["abc1234"],
}


def steps(task_id: str) -> list[Step]:
    task = f"tasks/{task_id}"
    return [
        ("claim", "task_update", {"status": "in_progress"}, "PATCH", task, 1, None),
        ("stale update", "task_update", {"status": "blocked"}, "PATCH", task, 1, None),
        (
            "handoff with receipt",
            "task_update",
            {"next_step": "Review it.", "handoff_note": "Done.", "work_receipt": RECEIPT},
            "PATCH",
            task,
            2,
            None,
        ),
        (
            "duplicate receipt",
            "task_update",
            {"next_step": "Again.", "work_receipt": RECEIPT},
            "PATCH",
            task,
            3,
            None,
        ),
        ("read back", "task_get", {}, "GET", task, None, None),
    ]


class Session:
    """One transport's way of playing a step; returns the JSON result (or error object)."""

    def __init__(self, server: InProcessServer, secret: str) -> None:
        self.server = server
        self.auth = {"Authorization": f"Bearer {secret}"}
        self.write_context: dict[str, str] = {}

    def mcp(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        headers = {
            **self.auth,
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
        }
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        message["params"] = {"name": tool, "arguments": arguments}
        answer = self.server.post(message, headers)
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]["structuredContent"]

    def rest(
        self, method: str, path: str, body: Any, if_match: int | None, key: str | None
    ) -> dict[str, Any]:
        headers = dict(self.auth)
        if if_match is not None:
            headers["If-Match"] = f'"{if_match}"'
        if key is not None:
            headers["Idempotency-Key"] = key
        content = None if body is None else json.dumps(body).encode()
        if content is not None:
            headers["Content-Type"] = "application/json"
        answer = self.server.portal.call(
            lambda: self.server.http.request(
                method, f"/api/v1/{path}", content=content, headers=headers
            )
        )
        return answer.json()


def play(session: Session, over: str) -> list[tuple[str, Any]]:
    """A session of the recovery protocol (docs/architecture.md), with every refusal in it."""

    def call(tool: str, args: dict[str, Any], method: str, path: str, **http: Any) -> Any:
        writes = method in ("POST", "PATCH", "PUT")
        body = {"write_context": session.write_context, **args} if writes else None
        if over == "mcp":
            mcp_args = dict(args)
            if http.get("if_match") is not None:
                mcp_args["expected_version"] = http["if_match"]
            if http.get("key") is not None:
                mcp_args["idempotency_key"] = http["key"]
            if path.startswith("tasks/") and tool != "task_create":
                mcp_args["task_id"] = path.split("/")[1]
            if writes:
                mcp_args["write_context"] = session.write_context
            return session.mcp(tool, mcp_args)
        return session.rest(method, path, body, http.get("if_match"), http.get("key"))

    results: list[tuple[str, Any]] = []
    identity = call("server_identity", {}, "GET", "identity")
    session.write_context = identity["write_context"]
    results.append(("identity", identity))
    results.append(("context", call("continuity_context", {}, "GET", "context")))
    created = call("task_create", TASK, "POST", "tasks", key="create-1")
    results.append(("create", created))
    results.append(
        ("idempotent replay", call("task_create", TASK, "POST", "tasks", key="create-1"))
    )
    other = {**TASK, "title": "Another title"}
    results.append(
        ("idempotency conflict", call("task_create", other, "POST", "tasks", key="create-1"))
    )
    for name, tool, args, method, path, if_match, key in steps(created["id"]):
        results.append((name, call(tool, args, method, path, if_match=if_match, key=key)))
    return results


AUDITED = (
    "operation",
    "outcome",
    "error_code",
    "target_type",
    "target_id",
    "actor_type",
    "actor_id",
    "actor_label",
    "user_id",
    "client_id",
    "credential_kind",
    "resource",
    "instance",
)


def audit_rows(project: Project) -> list[dict[str, Any]]:
    rows = AuditEvent.objects.filter(project_id=project.pk, operation__in=OPERATIONS_PLAYED)
    return list(rows.order_by("occurred_at", "id").values(*AUDITED))


OPERATIONS_PLAYED = (
    "server_identity",
    "continuity_context",
    "task_create",
    "task_update",
    "task_get",
)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def normalizer(project: Project, resource: str) -> Callable[[Any], Any]:
    """Replace what must differ (ids, times, the project's names, the resource) by placeholders
    numbered in order of first appearance."""
    seen: dict[str, str] = {
        str(project.pk): "<project>",
        project.slug: "<slug>",
        project.name: "<name>",
        resource: "<resource>",
    }

    def normalize(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: normalize(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [normalize(item) for item in value]
        if isinstance(value, str):
            if value in seen:
                return seen[value]
            if _UUID.match(value):
                seen[value] = f"<id {len(seen)}>"
                return seen[value]
            if _TIME.match(value):
                return "<time>"
        return value

    return normalize


def key_for(project: Project, owner_pk: int, label: str) -> str:
    return api_key_create(
        operator_caller(project),
        user_id=owner_pk,
        label=label,
        scopes=["continuity:read", "continuity:write"],
    ).secret


@pytest.mark.django_db(transaction=True)
def test_one_session_over_mcp_and_over_rest_gives_the_same_results_and_audit_rows():
    world = build_world()
    twin = make_project("twin", world.owner)
    bind_repository(twin)
    sides = {
        "mcp": (
            world.alpha,
            settings.HEYAIRA_MCP_RESOURCE,
            key_for(world.alpha, world.owner.pk, "k"),
        ),
        "rest": (twin, settings.HEYAIRA_API_RESOURCE, key_for(twin, world.owner.pk, "k")),
    }
    played: dict[str, Any] = {}
    audited: dict[str, Any] = {}
    with in_process_server() as server:
        for over, (project, resource, secret) in sides.items():
            normalize = normalizer(project, resource)
            played[over] = normalize(play(Session(server, secret), over))
            audited[over] = normalize(audit_rows(project))
    for (step, over_mcp), (same_step, over_rest) in zip(played["mcp"], played["rest"], strict=True):
        assert step == same_step
        assert over_mcp == over_rest, step
    codes = [result.get("error", {}).get("code") for _, result in played["rest"]]
    assert codes == [
        None,
        None,
        None,
        None,
        "idempotency_conflict",
        None,
        "stale_version",
        None,
        "duplicate_receipt",
        None,
    ]
    assert len(audited["mcp"]) == len(played["mcp"])
    for row_mcp, row_rest in zip(audited["mcp"], audited["rest"], strict=True):
        assert row_mcp == row_rest
