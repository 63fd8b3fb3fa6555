"""The `resume` prompt: the brief a new session starts from, for clients that show prompts as
commands (Claude Code: `/mcp__heyaira__resume`). Through the official Python SDK in both
protocol eras it lists one prompt without arguments and returns the brief, made of the two
audited reads a session starts with; a credential without continuity:read meets the same
step-up as at tools/call, and an unknown prompt is an Invalid params error."""

from __future__ import annotations

import uuid

import anyio
import pytest
from mcp import MCPError

from audit.models import AuditEvent
from continuity.brief import render_brief
from continuity.selectors import continuity_context, server_identity
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.continuity.helpers import new_task, update_task
from tests.continuity.mcp.harness import MODES, McpWorld, data, session
from tests.continuity.mcp.inprocess import in_process_server
from tests.continuity.mcp.test_step_up import MCP_HEADERS, audit_key, rows, scope_of
from tests.factories import build_world


@pytest.mark.live_server
@pytest.mark.parametrize("mode", MODES)
def test_prompts_get_resume_returns_the_brief_with_an_open_task(mcp_world: McpWorld, mode: str):
    title = f"Write the upgrade guide {uuid.uuid4().hex[:6]}"

    async def scenario() -> tuple[list[str], list[object], str]:
        headers = mcp_world.key_headers("olivia")
        async with session(mcp_world, mode, headers=headers) as client:
            identity = data(await client.call_tool("server_identity", {}))
            arguments = {"write_context": identity["write_context"], "title": title}
            created = await client.call_tool(
                "task_create", {**arguments, "description": "Backups first."}
            )
            assert not created.is_error
            listed = await client.list_prompts()
            result = await client.get_prompt("resume")
        (message,) = result.messages
        assert message.role == "user"
        assert message.content.type == "text"
        names = [prompt.name for prompt in listed.prompts]
        return names, [prompt.arguments for prompt in listed.prompts], message.content.text

    names, arguments, brief = anyio.run(scenario)
    assert names == ["resume"]
    assert arguments in ([None], [[]])  # no arguments: one command, nothing to ask
    assert brief.startswith("# HeyAira: Alpha (alpha)\n")
    assert f"] {title} (`" in brief
    assert "## Open tasks (" in brief


@pytest.mark.live_server
def test_an_unknown_prompt_is_an_invalid_params_error(mcp_world: McpWorld):
    async def scenario() -> MCPError:
        async with session(mcp_world, "legacy", headers=mcp_world.key_headers("victor")) as client:
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("summarize")
        return refused.value

    refusal = anyio.run(scenario)
    assert refusal.error.code == -32602
    assert refusal.error.message == "Unknown prompt: summarize"


GET_RESUME = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "resume"}}


def test_resume_is_the_two_audited_reads_a_session_starts_with(transactional_db):
    world = build_world()
    owner = world.caller("owner")
    task = new_task(owner, title="Ship the brief", next_step="Write it.")
    update_task(owner, task, status="in_progress", session_ref="s-1")
    new_task(owner, title="Waiting", blocked_by=[task["id"]])
    secret = api_key_create(
        operator_caller(world.alpha), user_id=world.owner.pk, label="b", scopes=["continuity:read"]
    ).secret
    request_id = uuid.uuid4().hex
    with in_process_server() as server:
        answer = server.post(
            GET_RESUME,
            {**MCP_HEADERS, "Authorization": f"Bearer {secret}", "X-Request-ID": request_id},
        )
    assert answer.status_code == 200, answer.text
    text = answer.json()["result"]["messages"][0]["content"]["text"]
    caller = world.caller("owner")
    expected = render_brief(server_identity(caller), continuity_context(caller))
    assert text.split("\n", 3)[3] == expected.split("\n", 3)[3]  # all but the acting line
    assert "- [in_progress] Ship the brief" in text
    assert "lease: held by" in text
    assert "session `s-1`" in text
    assert "- [todo, waiting on 1] Waiting" in text
    assert sorted((op, outcome) for op, outcome, *_ in rows(request_id)) == [
        ("continuity_context", "success"),
        ("server_identity", "success"),
    ]


def test_a_credential_without_continuity_read_gets_the_step_up_challenge(transactional_db):
    secret, _ = audit_key()
    request_id = uuid.uuid4().hex
    with in_process_server() as server:
        answer = server.post(
            GET_RESUME,
            {**MCP_HEADERS, "Authorization": f"Bearer {secret}", "X-Request-ID": request_id},
        )
    assert answer.status_code == 403, answer.text
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert scope_of(challenge) == "audit:read continuity:read"
    assert AuditEvent.objects.filter(request_id=request_id).count() == 1
