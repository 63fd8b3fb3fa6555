"""A profile that pins another resource, instance or project refuses every write before anything
is sent: the SDK raises ProfileMismatch at verify() and NotVerified on each write, the only
request that reached the server was server_identity (counted on the wire), and the server holds
no new row and no new write audit event. The CLI refuses the same way (exit status 3)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from heyaira_client import HeyAira, NotVerified, ProfileMismatch
from tests.client.conftest import Home, Seat

pytestmark = pytest.mark.live_server

MISMATCHES = {
    "resource": {"resource": "https://heyaira.example.com/mcp"},
    "instance": {"instance": "production"},
    "project": {"project": "someone-elses-project"},
}


class WireLog:
    """Every JSON-RPC request the client puts on the wire: (method, tool name or None)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    async def __call__(self, request: httpx2.Request) -> None:
        if request.method != "POST" or not request.content:
            return
        message = json.loads(request.content)
        params = message.get("params") or {}
        self.calls.append((message.get("method", ""), params.get("name")))

    @property
    def tools(self) -> list[str | None]:
        return [name for method, name in self.calls if method == "tools/call"]


async def attempt_every_write(heyaira: HeyAira, task_id: str) -> dict[str, Any]:
    refusals: dict[str, Any] = {}
    try:
        await heyaira.verify()
    except ProfileMismatch as mismatch:
        refusals["verify"] = mismatch
    writes = {
        "note": lambda: heyaira.note("Should never arrive."),
        "decide": lambda: heyaira.decide("No", "No.", rationale="No.", source="test"),
        "task_create": lambda: heyaira.task_create(title="No", description="No."),
        "task_update": lambda: heyaira.task_update(task_id, expected_version=1, status="done"),
        "state_put": lambda: heyaira.state_put("# Running summary\n\n- no\n"),
    }
    for name, write in writes.items():
        try:
            await write()
        except NotVerified as refusal:
            refusals[name] = refusal
    return refusals


async def make_task(seat: Seat) -> str:
    async with HeyAira(seat.profile()) as heyaira:
        await heyaira.verify()
        return (await heyaira.task_create(title="Keep me", description="Unchanged.")).id


@pytest.mark.parametrize("field", sorted(MISMATCHES))
def test_it_refuses_every_write_on_a_mismatch_before_sending_it(seat: Seat, field: str):
    task_id = anyio.run(make_task, seat)
    before = seat.counts()
    wire = WireLog()

    async def run() -> dict[str, Any]:
        profile = seat.profile(**MISMATCHES[field])
        async with HeyAira(profile, event_hooks={"request": [wire]}) as heyaira:
            return await attempt_every_write(heyaira, task_id)

    refusals = anyio.run(run)

    assert refusals["verify"].field == field
    assert set(refusals) == {"verify", "note", "decide", "task_create", "task_update", "state_put"}
    assert wire.tools == ["server_identity"]  # the only tool call on the wire
    assert seat.counts() == before  # no row, no write audit event


@pytest.mark.parametrize("field", sorted(MISMATCHES))
def test_the_cli_refuses_every_write_on_a_mismatch(home: Home, seat: Seat, field: str):
    task_id = anyio.run(make_task, seat)
    seat.saved(home, **MISMATCHES[field])
    before = seat.counts()
    commands = [
        ("note", "Should never arrive."),
        ("decide", "No", "--content", "No.", "--rationale", "No.", "--source", "test"),
        ("claim", task_id),
        ("handoff", task_id, "--summary", "No.", "--session-ref", "s-1", "--status", "done"),
    ]
    for command in commands:
        done = home.cli(*command)
        assert done.returncode == 3, (command, done.stdout, done.stderr)
        assert f"server_identity {field} is" in done.stderr
        assert "refusing to write" in done.stderr
    assert home.cli("whoami").returncode == 3
    assert seat.counts() == before
