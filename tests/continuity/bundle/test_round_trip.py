"""Round trip: a project with every record type exported here, imported into a second instance
on its own database (a live server), exported again there: the data lines are byte-identical,
both audit chains verify, and REST and MCP reads of the import equal the original's."""

from __future__ import annotations

import io
import json
from pathlib import Path

import httpx2
import pytest
from django.core.management import call_command

from audit import chain
from continuity.models import Memory, Task
from tests.continuity.api.helpers import api_for
from tests.continuity.bundle.conftest import export_bytes
from tests.core.live_calls import call_tool
from tests.factories import World
from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)
MEMBERS = ("olivia", "adam", "carla", "victor")
READ = ("continuity:read",)


def _data_lines(bundle: bytes) -> list[bytes]:
    return bundle.splitlines(keepends=True)[1:-1]


def _import_there(server: LiveServer, bundle: bytes, tmp_path: Path) -> str:
    path = tmp_path / "alpha.jsonl"
    path.write_bytes(bundle)
    users = "\n".join(
        f"get_user_model().objects.create_user(username={name!r}, password='pw-{name}-Xy7!')"
        for name in MEMBERS
    )
    server.run_python(f"from django.contrib.auth import get_user_model\n{users}")
    return server.manage("project_import", str(path))


def test_a_bundle_goes_to_another_instance_and_comes_back_the_same(
    full: World, asgi_server: LiveServer, tmp_path: Path
) -> None:
    bundle = export_bytes("alpha")
    call_command("verify_audit", "alpha", stdout=io.StringIO())
    leases = [
        record["lease"]
        for record in map(json.loads, bundle.splitlines())
        if record.get("record") == "task" and record["lease"] is not None
    ]
    assert len(leases) == 8  # the claims fill() leaves held travel with their holders
    assert {lease["holder"]["session_ref"] for lease in leases} >= {"agent-2", "agent-8"}

    report = _import_there(asgi_server, bundle, tmp_path)
    assert "Imported project alpha" in report
    assert "memory: 100" in report
    assert "task: 50" in report
    # The bundle's chain, archived, and the project's new one: both verify there.
    verified = asgi_server.manage("verify_audit", "alpha")
    archived, live = chain.chain_of(full.alpha.pk), chain.chain_of(full.alpha.pk, 2)
    assert f"{archived}: ok, " in verified
    assert f"{live}: ok, " in verified
    asgi_server.manage("verify_audit")
    again = tmp_path / "again.jsonl"
    asgi_server.manage("project_export", "alpha", "--output", str(again))

    original, returned = _data_lines(bundle), _data_lines(again.read_bytes())
    assert returned[: len(original)] == original
    extra = [json.loads(line) for line in returned[len(original) :]]
    assert [(e["record"], e["operation"]) for e in extra] == [("audit_event", "project_import")]
    assert (extra[0]["chain"], extra[0]["seq"], extra[0]["prev_hash"]) == (live, 1, "")
    digest = json.loads(bundle.splitlines()[-1])["digest"]
    assert extra[0]["target_id"] == digest


def test_reads_of_the_import_equal_the_originals(
    full: World, asgi_server: LiveServer, tmp_path: Path
) -> None:
    here = api_for(full, "owner", READ)
    tasks = list(Task.objects.filter(project=full.alpha).order_by("id")[:10])
    memories = list(Memory.objects.filter(project=full.alpha).order_by("id")[:10])
    paths = [f"tasks/{t.pk}" for t in tasks] + [f"memories/{m.pk}" for m in memories]
    paths += ["tasks?limit=50", "memories?limit=100", "context?agent=claude"]
    expected = {path: here.get(path).json() for path in paths}
    _import_there(asgi_server, export_bytes("alpha"), tmp_path)

    key = (
        asgi_server.manage(
            "create_api_key", "alpha", "--user", "olivia", "--scopes", "continuity:read"
        )
        .strip()
        .splitlines()[-1]
    )
    headers = {"Authorization": f"Bearer {key}"}
    with httpx2.Client(timeout=30) as http:
        for path in paths:
            answer = http.get(f"{asgi_server.api_url}/v1/{path}", headers=headers)
            assert answer.status_code == 200, path
            there = answer.json()
            if path.startswith("context"):  # the context names the instance it answers from
                there.pop("instance", None), expected[path].pop("instance", None)
            assert there == expected[path], path
        for task in tasks:
            mcp = call_tool(http, asgi_server, key, "task_get", {"task_id": str(task.pk)})
            assert mcp.ok, mcp
            assert mcp.data == expected[f"tasks/{task.pk}"]
        for memory in memories:
            mcp = call_tool(http, asgi_server, key, "memory_get", {"memory_id": str(memory.pk)})
            assert mcp.ok, mcp
            assert mcp.data == expected[f"memories/{memory.pk}"]


def test_the_live_rest_export_streams_the_commands_bytes(
    small: World, asgi_server: LiveServer, tmp_path: Path
) -> None:
    _import_there(asgi_server, export_bytes("alpha"), tmp_path)
    key = (
        asgi_server.manage(
            "create_api_key", "alpha", "--user", "olivia", "--scopes", "continuity:read,audit:read"
        )
        .strip()
        .splitlines()[-1]
    )
    chunks: list[bytes] = []
    with httpx2.Client(timeout=60) as http:
        url = f"{asgi_server.api_url}/v1/export"
        with http.stream("GET", url, headers={"Authorization": f"Bearer {key}"}) as answer:
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "application/x-ndjson"
            chunks = list(answer.iter_raw())
    streamed = b"".join(chunks)
    after = tmp_path / "after.jsonl"
    asgi_server.manage("project_export", "alpha", "--output", str(after))
    assert streamed == after.read_bytes()
    assert b'"operation":"project_export"' in streamed.splitlines()[-2]
