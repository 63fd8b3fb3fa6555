"""A lost answer never makes a second row, and a lost task update is read back, not repeated.

A proxy in front of the live server (tests/client/proxy.py) lets a chosen request through and
then withholds the server's answer: after killing the client process (a crash between sending
and reading) or not (a dropped connection). The server is told the proxy's URL as its public one,
so the client's pinned resource is what it connects to.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import anyio
import pytest

from heyaira_client import HeyAira, Journal
from tests.client.conftest import Home, Seat
from tests.client.proxy import CuttingProxy, cutting_proxy, listening_socket
from tests.live import LiveServer, start_live_server, stop_live_server

pytestmark = pytest.mark.live_server


@pytest.fixture(scope="module")
def proxied(
    tmp_path_factory: pytest.TempPathFactory, live_processes: None
) -> Iterator[tuple[LiveServer, CuttingProxy]]:
    listener = listening_socket()
    public = f"http://127.0.0.1:{listener.getsockname()[1]}"
    live, pg_name = start_live_server(tmp_path_factory.mktemp("crash-live"), public_url=public)
    try:
        with cutting_proxy(listener, int(urlsplit(live.url).port or 0)) as proxy:
            yield live, proxy
    finally:
        stop_live_server(live, pg_name)


@pytest.fixture(scope="module")
def server(proxied: tuple[LiveServer, CuttingProxy]) -> LiveServer:
    return proxied[0]


@pytest.fixture
def proxy(proxied: tuple[LiveServer, CuttingProxy]) -> Iterator[CuttingProxy]:
    proxy = proxied[1]
    proxy.cuts = 0
    yield proxy
    proxy.arm(b"")


def journal(home: Home) -> Journal:
    return Journal(home.state / "journal.sqlite3")


def killed_during(home: Home, proxy: CuttingProxy, trigger: bytes, *args: str) -> None:
    """Run `heyaira ARGS`; the proxy kills it once the trigger's answer is on its way back."""
    process = subprocess.Popen(
        [sys.executable, "-m", "heyaira_client", *args],
        env=home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proxy.arm(trigger, victim_pid=process.pid)  # long before it has even imported the SDK
    process.communicate(timeout=120)
    assert process.returncode == -signal.SIGKILL
    assert proxy.cuts == 1


def test_a_client_killed_after_sending_memory_add_replays_its_key(home: Home, seat: Seat, proxy):
    seat.saved(home)

    killed_during(home, proxy, b"memory_add", "note", "Exactly once, crash or not.")

    # The server did the work; the client died before reading it; its journal kept the key.
    assert seat.counts()["memories"] == 1
    (pending,) = journal(home).pending()
    assert pending["operation"] == "memory_add"
    assert pending["attempts"] == 1

    rerun = home.cli("note", "Exactly once, crash or not.")

    assert rerun.returncode == 0, rerun.stderr
    assert "(an earlier attempt's key, replayed)" in rerun.stdout
    assert seat.counts()["memories"] == 1
    assert seat.outcomes("memory_add") == ["success", "replayed"]
    assert journal(home).pending() == []
    # A new note with the same text afterwards is a new write, under a new key.
    again = home.cli("note", "Exactly once, crash or not.")
    assert "replayed" not in again.stdout
    assert seat.counts()["memories"] == 2


def test_a_lost_answer_is_retried_in_process_with_the_same_key(seat: Seat, proxy):
    async def run() -> str:
        async with HeyAira(seat.profile()) as heyaira:
            await heyaira.verify()
            proxy.arm(b"task_create")
            written = await heyaira.task_create(title="Once", description="Only one row.")
            return written.id

    task_id = anyio.run(run)

    assert proxy.cuts == 1
    assert seat.counts()["tasks"] == 1
    assert seat.outcomes("task_create") == ["success", "replayed"]
    assert (
        seat.rows(
            "from continuity.models import Task\nresult = str(Task.objects.get(project=project).pk)"
        )
        == task_id
    )


def test_a_lost_task_update_is_read_back_and_never_sent_again(seat: Seat, proxy):
    async def run() -> tuple[bool, int, int]:
        async with HeyAira(seat.profile()) as heyaira:
            await heyaira.verify()
            task = await heyaira.task_create(title="Hand me over", description="Once.")
            proxy.arm(b"task_update")
            update = await heyaira.task_update(
                task.id,
                expected_version=1,
                status="in_progress",
                work_receipt={"session_ref": "lost-1", "summary": "Started."},
            )
            assert update.receipt is not None
            return (
                update.recovered,
                update.task.version,
                len((await heyaira.task_get(task.id)).receipts),
            )

    recovered, version, receipts = anyio.run(run)

    assert proxy.cuts == 1
    assert recovered
    assert version == 2
    assert receipts == 1
    assert seat.outcomes("task_update") == ["success"]  # sent once, read back, not repeated


def test_a_handoff_killed_before_its_answer_is_resolved_by_running_it_again(
    home: Home, seat: Seat, proxy
):
    profile = seat.saved(home)

    async def make() -> str:
        async with HeyAira(profile, journal=journal(home)) as heyaira:
            await heyaira.verify()
            return (await heyaira.task_create(title="Finish", description="With a receipt.")).id

    task_id = anyio.run(make)
    handoff = [*("handoff", task_id, "--summary", "Finished it.", "--session-ref", "crash-2")]
    handoff += ["--status", "in_progress"]

    killed_during(home, proxy, b"task_update", *handoff)
    assert seat.outcomes("task_update") == ["success"]

    rerun = home.cli(*handoff)  # no --version: the journal's unfinished one is used

    assert rerun.returncode == 0, rerun.stderr
    assert "in_progress, version 2" in rerun.stdout
    assert "(answer lost; read back)" in rerun.stdout
    assert seat.outcomes("task_update") == ["success"]
    assert seat.counts()["receipts"] == 1
    assert journal(home).pending() == []
