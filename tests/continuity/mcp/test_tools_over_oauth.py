"""The continuity protocol with the official SDK client, over OAuth, in both protocol eras.

OAuth is the SDK's own OAuthClientProvider (discovery, dynamic registration, PKCE, resource); the
test plays the person at the browser (sign-in, project choice, consent) over HTTP.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.continuity.mcp.harness import EVERY_TOOL, MODES, McpWorld, data, error_code, session

pytestmark = pytest.mark.live_server


def run(world: McpWorld, mode: str, scenario: Any, **session_options: Any) -> Any:
    async def main() -> Any:
        async with session(world, mode, **session_options) as client:
            return await scenario(client)

    return anyio.run(main)


async def identity(client: Client) -> dict[str, Any]:
    return data(await client.call_tool("server_identity", {}))


@pytest.mark.parametrize("mode", MODES)
def test_it_serves_every_tool_over_oauth(mcp_world: McpWorld, mode: str):
    tag = uuid.uuid4().hex[:8]

    async def scenario(client: Client) -> dict[str, Any]:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        me = await identity(client)
        wc = me["write_context"]
        decision = data(
            await client.call_tool(
                "memory_add",
                {
                    "write_context": wc,
                    "kind": "decision",
                    "title": f"Use PostgreSQL {tag}",
                    "content": f"We store state in PostgreSQL ({tag}).",
                    "rationale": "Transactions and full-text search.",
                    "source": "design review",
                    "idempotency_key": f"decision-{tag}",
                },
            )
        )
        found = data(await client.call_tool("memory_search", {"query": f"PostgreSQL {tag}"}))
        memory = data(await client.call_tool("memory_get", {"memory_id": decision["id"]}))
        task = data(
            await client.call_tool(
                "task_create",
                {
                    "write_context": wc,
                    "title": f"Ship {tag}",
                    "description": "Ship it, with tests.",
                    "repository_ref": {"repository": "acme/app", "branch": "main"},
                    "idempotency_key": f"task-{tag}",
                },
            )
        )
        claimed = data(
            await client.call_tool(
                "task_update",
                {
                    "write_context": wc,
                    "task_id": task["id"],
                    "expected_version": task["version"],
                    "status": "in_progress",
                    "work_receipt": {
                        "session_ref": f"session-{tag}",
                        "summary": "Claimed and started.",
                        "tests": [{"name": "pytest", "result": "passed"}],
                        "commits": ["0123abcd"],
                    },
                },
            )
        )
        full_task = data(await client.call_tool("task_get", {"task_id": task["id"]}))
        page = data(await client.call_tool("task_list", {"status": "open", "limit": 5}))
        state = data(
            await client.call_tool(
                "state_put",
                {
                    "write_context": wc,
                    "agent": f"agent-{tag}",
                    "body": "# Running summary\n\n- goal: ship\n- done: claimed the task",
                },
            )
        )
        summary = data(await client.call_tool("state_get", {"agent": f"agent-{tag}"}))
        context = data(await client.call_tool("continuity_context", {"agent": f"agent-{tag}"}))
        return locals()

    seen = run(mcp_world, mode, scenario, auth=mcp_world.oauth())
    assert set(seen["listed"]) == set(EVERY_TOOL)
    assert seen["me"]["principal"]["credential"] == "oauth_token"
    assert seen["me"]["resource"] == mcp_world.server.mcp_url
    assert seen["found"]["results"][0]["id"] == seen["decision"]["id"]
    assert seen["memory"]["memory"]["rationale"] == "Transactions and full-text search."
    assert seen["claimed"]["task"]["version"] == 2
    assert seen["claimed"]["receipt"]["session_ref"] == f"session-{seen['tag']}"
    assert seen["full_task"]["receipts"][0]["tests"] == [{"name": "pytest", "result": "passed"}]
    assert seen["task"]["id"] in {t["id"] for t in seen["page"]["tasks"]}
    assert seen["state"]["version"] == 1
    assert seen["summary"]["state"]["body"].startswith("# Running summary")
    context = seen["context"]
    assert seen["decision"]["id"] in {m["id"] for m in context["memories"]}
    assert seen["task"]["id"] in {t["id"] for t in context["tasks"]}
    assert context["state"]["agent"] == f"agent-{seen['tag']}"


@pytest.mark.parametrize("mode", MODES)
def test_it_produces_every_pinned_error_code_as_a_tool_error(mcp_world: McpWorld, mode: str):
    tag = uuid.uuid4().hex[:8]

    async def scenario(client: Client) -> dict[str, str]:
        wc = (await identity(client))["write_context"]
        task = data(
            await client.call_tool(
                "task_create",
                {"write_context": wc, "title": f"T {tag}", "description": "d"},
            )
        )
        receipt = {"session_ref": f"s-{tag}", "summary": "did it"}
        await client.call_tool(
            "task_update",
            {
                "write_context": wc,
                "task_id": task["id"],
                "expected_version": 1,
                "status": "in_progress",
                "work_receipt": receipt,
            },
        )
        await client.call_tool(
            "memory_add",
            {"write_context": wc, "kind": "note", "content": "a", "idempotency_key": f"k-{tag}"},
        )
        codes = {}
        codes["not_found"] = error_code(
            await client.call_tool("task_get", {"task_id": str(uuid.uuid4())})
        )
        codes["validation_error"] = error_code(
            await client.call_tool("memory_add", {"write_context": wc, "kind": "poem"})
        )
        codes["write_context_mismatch"] = error_code(
            await client.call_tool(
                "memory_add",
                {"write_context": {**wc, "instance": "elsewhere"}, "kind": "note", "content": "x"},
            )
        )
        codes["stale_version"] = error_code(
            await client.call_tool(
                "task_update",
                {
                    "write_context": wc,
                    "task_id": task["id"],
                    "expected_version": 1,
                    "next_step": "x",
                },
            )
        )
        done = data(
            await client.call_tool(
                "task_update",
                {
                    "write_context": wc,
                    "task_id": task["id"],
                    "expected_version": 2,
                    "status": "done",
                },
            )
        )
        assert done["task"]["status"] == "done"
        codes["invalid_transition"] = error_code(
            await client.call_tool(
                "task_update",
                {
                    "write_context": wc,
                    "task_id": task["id"],
                    "expected_version": 3,
                    "status": "in_progress",
                },
            )
        )
        codes["idempotency_conflict"] = error_code(
            await client.call_tool(
                "memory_add",
                {
                    "write_context": wc,
                    "kind": "note",
                    "content": "b",
                    "idempotency_key": f"k-{tag}",
                },
            )
        )
        codes["duplicate_receipt"] = error_code(
            await client.call_tool(
                "task_update",
                {
                    "write_context": wc,
                    "task_id": task["id"],
                    "expected_version": 3,
                    "next_step": "z",
                    "work_receipt": receipt,
                },
            )
        )
        return codes

    codes = run(mcp_world, mode, scenario, auth=mcp_world.oauth())
    assert codes == {name: name for name in codes}
    assert len(codes) == 7


WRITES = ("memory_add", "task_create", "task_update", "task_claim_next", "state_put")


@pytest.mark.parametrize("mode", MODES)
def test_a_viewer_gets_forbidden_on_every_write(mcp_world: McpWorld, mode: str):
    before = mcp_world.server.run_python(
        "from continuity.models import Memory, Task, StateVersion\n"
        "result = [Memory.objects.count(), Task.objects.count(), StateVersion.objects.count()]"
    )

    async def scenario(client: Client) -> dict[str, Any]:
        me = await identity(client)
        wc = me["write_context"]
        arguments = {
            "memory_add": {"write_context": wc, "kind": "note", "content": "viewer note"},
            "task_create": {"write_context": wc, "title": "t", "description": "d"},
            "task_update": {
                "write_context": wc,
                "task_id": str(uuid.uuid4()),
                "expected_version": 1,
                "status": "in_progress",
            },
            "task_claim_next": {"write_context": wc},
            "state_put": {
                "write_context": wc,
                "agent": "viewer",
                "body": "# Running summary\n\n- nothing",
            },
        }
        codes = {name: error_code(await client.call_tool(name, arguments[name])) for name in WRITES}
        return {"role": me["principal"]["role"], "scopes": me["principal"]["scopes"], **codes}

    seen = run(mcp_world, mode, scenario, auth=mcp_world.oauth("victor", "alpha"))
    assert seen == {
        "role": "viewer",
        "scopes": ["continuity:read"],  # consent never grants more than the role allows
        **dict.fromkeys(WRITES, "forbidden"),
    }
    after = mcp_world.server.run_python(
        "from continuity.models import Memory, Task, StateVersion\n"
        "result = [Memory.objects.count(), Task.objects.count(), StateVersion.objects.count()]"
    )
    assert after == before


@pytest.mark.parametrize("mode", MODES)
def test_a_token_for_one_project_never_sees_or_changes_another(mcp_world: McpWorld, mode: str):
    tag = uuid.uuid4().hex[:8]

    async def in_beta(client: Client) -> dict[str, Any]:
        wc = (await identity(client))["write_context"]
        memory = data(
            await client.call_tool(
                "memory_add",
                {"write_context": wc, "kind": "note", "content": f"beta secret plan {tag}"},
            )
        )
        task = data(
            await client.call_tool(
                "task_create", {"write_context": wc, "title": f"beta {tag}", "description": "d"}
            )
        )
        return {"memory": memory["id"], "task": task["id"], "project": wc["project"]}

    beta = run(mcp_world, mode, in_beta, headers=mcp_world.key_headers("oscar"))

    async def from_alpha(client: Client) -> dict[str, Any]:
        wc = (await identity(client))["write_context"]
        missing_task = str(uuid.uuid4())
        return {
            "memory_get": data(await client.call_tool("memory_get", {"memory_id": beta["memory"]})),
            "task_get": data(await client.call_tool("task_get", {"task_id": beta["task"]})),
            "task_get_missing": data(await client.call_tool("task_get", {"task_id": missing_task})),
            "task_update": data(
                await client.call_tool(
                    "task_update",
                    {
                        "write_context": wc,
                        "task_id": beta["task"],
                        "expected_version": 1,
                        "status": "cancelled",
                    },
                )
            ),
            "search": data(await client.call_tool("memory_search", {"query": f"plan {tag}"})),
            "context": data(
                await client.call_tool(
                    "continuity_context", {"memory_limit": 50, "task_limit": 100}
                )
            ),
        }

    seen = run(mcp_world, mode, from_alpha, auth=mcp_world.oauth())
    # Another project's ids answer exactly like ids that do not exist.
    assert seen["task_get"] == seen["task_get_missing"]
    assert seen["task_get"]["error"]["code"] == "not_found"
    assert seen["memory_get"]["error"]["code"] == "not_found"
    assert seen["task_update"]["error"]["code"] == "not_found"
    assert seen["search"]["results"] == []
    assert beta["memory"] not in {m["id"] for m in seen["context"]["memories"]}
    assert beta["task"] not in {t["id"] for t in seen["context"]["tasks"]}
    untouched = mcp_world.server.run_python(
        f"from continuity.models import Task\n"
        f"t = Task.objects.get(pk={beta['task']!r})\nresult = [t.status, t.version]"
    )
    assert untouched == ["todo", 1]


@pytest.mark.parametrize("mode", MODES)
def test_a_write_context_naming_another_project_resource_or_instance_is_rejected_and_audited(
    mcp_world: McpWorld, mode: str
):
    beta_id = mcp_world.server.run_python(
        "from projects.models import Project\nresult = str(Project.objects.get(slug='beta').pk)"
    )
    wrong = {
        "project": beta_id,
        "resource": mcp_world.server.api_url,
        "instance": "another-instance",
    }

    async def scenario(client: Client) -> dict[str, Any]:
        wc = (await identity(client))["write_context"]
        answers = {}
        for field, value in wrong.items():
            result = await client.call_tool(
                "memory_add",
                {"write_context": {**wc, field: value}, "kind": "note", "content": "misrouted"},
            )
            answers[field] = data(result)["error"]
        return answers

    before = len(mcp_world.audit_rows("e.error_code == 'write_context_mismatch'"))
    answers = run(mcp_world, mode, scenario, auth=mcp_world.oauth())
    for field, error in answers.items():
        assert error["code"] == "write_context_mismatch"
        assert error["mismatched"] == [field]
    rows = mcp_world.audit_rows("e.error_code == 'write_context_mismatch'")[before:]
    assert [(r["operation"], r["outcome"], r["actor_label"], r["project"]) for r in rows] == [
        ("memory_add", "rejected", "olivia", "alpha")
    ] * 3
    stored = mcp_world.server.run_python(
        "from continuity.models import Memory\n"
        "result = Memory.objects.filter(content='misrouted').count()"
    )
    assert stored == 0
