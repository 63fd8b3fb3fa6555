"""The heyaira command end to end against a live server: a profile, whoami, context, a note and
a decision, a task claimed and handed over with a receipt, as a person types them."""

from __future__ import annotations

import json

import anyio
import pytest

from heyaira_client import HeyAira
from tests.client.conftest import Home, Seat
from tests.live import free_port

pytestmark = pytest.mark.live_server


async def create_task(seat: Seat) -> str:
    async with HeyAira(seat.profile()) as heyaira:
        await heyaira.verify()
        written = await heyaira.task_create(
            title="Ship the client", description="Done when it ships."
        )
    return written.id


def test_it_runs_the_protocol_from_the_command_line(home: Home, seat: Seat):
    added = home.cli(
        *("profile", "add", "work", "--url", seat.server.mcp_url, "--instance", "live-test"),
        *("--project", seat.slug, "--credential", "env:HEYAIRA_TEST_KEY", "--agent", "cli"),
    )
    assert added.returncode == 0, added.stderr
    assert home.profiles.stat().st_mode & 0o777 == 0o600
    home.env["HEYAIRA_TEST_KEY"] = seat.key

    whoami = home.cli("whoami")
    assert whoami.returncode == 0, whoami.stderr
    assert f"({seat.username}) as owner of" in whoami.stdout
    assert "resource, instance and project match" in whoami.stdout

    note = home.cli("note", "The runbook is docs/operating.md.", "--title", "Runbook")
    assert note.returncode == 0, note.stderr
    decision = home.cli(
        *("decide", "Use PostgreSQL", "--content", "Production keeps state in PostgreSQL."),
        *("--rationale", "Row locks and transactions.", "--source", "design review"),
    )
    assert decision.returncode == 0, decision.stderr

    task = anyio.run(create_task, seat)
    tasks = home.cli("tasks")
    assert tasks.returncode == 0, tasks.stderr
    assert task in tasks.stdout
    assert "v1" in tasks.stdout

    claimed = home.cli("claim", task, "--next-step", "Write the README.")
    assert claimed.returncode == 0, claimed.stderr
    assert "in_progress, version 2" in claimed.stdout
    handed = home.cli(
        *("handoff", task, "--summary", "Wrote the client.", "--session-ref", "cli-test-1"),
        *("--status", "done", "--test", "tests/client=passed", "--commit", "0123456789abcdef"),
    )
    assert handed.returncode == 0, handed.stderr
    assert "done, version 3, receipt" in handed.stdout

    context = home.cli("context")
    assert context.returncode == 0, context.stderr
    brief = context.stdout
    assert brief.startswith(f"# HeyAira: {seat.slug.title()} ({seat.slug})")
    assert "Use PostgreSQL" in brief
    assert "Runbook" in brief
    assert "Wrote the client." in brief  # the receipt

    as_json = json.loads(home.cli("context", "--json").stdout)
    assert as_json["context"]["counts"]["memories"] == 2
    assert seat.counts()["receipts"] == 1


def test_a_refused_key_is_reported_as_such_and_writes_nothing(home: Home, seat: Seat):
    seat.saved(home)
    home.env["HEYAIRA_TEST_KEY"] = seat.key[:-4] + "AAAA"  # a key the server does not know
    before = seat.counts()

    for command in (("whoami",), ("note", "Never written.")):
        done = home.cli(*command)
        assert done.returncode == 4, (done.stdout, done.stderr)
        assert "refused the credential of profile work (HTTP 401)" in done.stderr
    assert seat.counts() == before


def test_no_server_is_one_line_and_its_own_exit_status(home: Home):
    port = free_port()  # nothing listens there
    added = home.cli(
        *("profile", "add", "gone", "--url", f"http://127.0.0.1:{port}/mcp", "--instance", "x"),
        *("--project", "p", "--credential", "env:HEYAIRA_TEST_KEY"),
    )
    assert added.returncode == 0, added.stderr

    done = home.cli("whoami", HEYAIRA_TEST_KEY="hak_unused")

    assert done.returncode == 6, done.stderr
    assert done.stderr.startswith(f"heyaira: cannot connect to http://127.0.0.1:{port}/mcp")
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert "ExceptionGroup" not in done.stderr
