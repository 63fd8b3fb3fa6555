"""A crashed agent's claim comes back, and the agent cannot come back to it: two `heyaira`
command-line agents, on two API keys, against a live server on PostgreSQL.

Agent A claims the next task with a 12-second lease and works (its loop renews the lease with
`heyaira heartbeat --if-due` every third of it, as the hooks do), then is SIGKILLed. Agent B's
`claim --next` gets nothing while the lease is live, and the task once the server's clock passes
its expiry. A restarted A, reusing its old version and session, is refused (stale_version,
lease_lost) and leaves no receipt; the audit log has the claim, the takeover and the refusals in
that order.

The server is this module's own, with its lease floor lowered (HEYAIRA_LEASE_MIN_SECONDS) so the
lease can be 12 s instead of the production floor's 30: the same three beats per lease, in 40% of
the waiting. A renewal still has 8 s of slack for a command that starts in about a second.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from heyaira_client import Profile
from tests.client.conftest import Home, Seat
from tests.client.test_cli import create_task
from tests.live import LiveServer, serving

pytestmark = [pytest.mark.live_server, pytest.mark.postgres]

LEASE = 12
BEAT = LEASE // 3  # agent A's loop: a heartbeat is due once a third of the lease has gone by
POLL = 1  # agent B's pause between claims after the kill


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Iterator[LiveServer]:
    """`seat` (tests/client/conftest.py) makes its project on this server."""
    yield from serving(
        tmp_path_factory.mktemp("lease-crash"), extra_env={"HEYAIRA_LEASE_MIN_SECONDS": "1"}
    )


def second_home(home: Home, tmp_path: Path, key: str, profile: Profile) -> Home:
    """Agent B's machine: its own XDG directories and profile, its own API key."""
    root = tmp_path / "b"
    env = {
        **home.env,
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "HEYAIRA_PROFILES": str(root / "config" / "heyaira" / "profiles.toml"),
        "HOME": str(root / "home"),
        "HEYAIRA_TEST_KEY": key,
    }
    (root / "home").mkdir(parents=True)
    agent = Home(root=root, env=env)
    added = agent.cli(
        *("profile", "add", profile.name, "--url", profile.url, "--instance", profile.instance),
        *("--project", profile.project, "--credential", "env:HEYAIRA_TEST_KEY", "--default"),
    )
    assert added.returncode == 0, added.stderr
    return agent


def audit_trail(seat: Seat, task_id: str) -> list[list[str]]:
    """The project's lease events, oldest first: [operation, actor, outcome, error, target]."""
    return list(
        seat.rows(
            """
from audit.models import AuditEvent
ops = ("task_claim_next", "lease_expired", "task_update", "task_heartbeat")
events = AuditEvent.objects.filter(project_id=project.pk, operation__in=ops).order_by("seq")
result = [[e.operation, e.actor_label, e.outcome, e.error_code, e.target_id] for e in events]
"""
        )
    )


def lease_of(seat: Seat, task_id: str) -> list[str]:
    return list(
        seat.rows(
            f"""
from continuity.models import Task
task = Task.objects.get(pk={task_id!r})
result = [task.lease_actor, task.lease_session_ref, task.lease_expires_at.isoformat(), task.version]
"""
        )
    )


def work_then_die(seat: Seat, agent_a: Any, agent_b: Home, task_id: str) -> str:
    """A claims and works; B finds nothing meanwhile; A is killed. The lease's end as A's
    last renewal left it."""
    assert agent_a.stdout is not None
    claimed = agent_a.stdout.readline()
    assert claimed.startswith(f"claimed {task_id}: in_progress, version 2"), claimed
    holder, session, _, version = lease_of(seat, task_id)
    assert seat.username in holder  # the API key's label names its person
    assert (session, version) == ("agent-a-1", 2)
    # Mid-work: B finds nothing to claim while A's lease is live.
    nothing = agent_b.cli("claim", "--next", "--session-ref", "agent-b-1")
    assert nothing.returncode == 0, nothing.stderr
    assert "nothing to claim" in nothing.stdout
    # A renews once (a third of the lease gone by), and dies while working on.
    renewed = agent_a.stdout.readline()
    assert renewed == f"renewed {task_id}\n", renewed
    os.killpg(agent_a.pid, signal.SIGKILL)
    agent_a.wait(timeout=30)
    return str(lease_of(seat, task_id)[2])


def test_a_killed_agents_task_is_taken_over_after_its_lease_and_the_agent_is_fenced_off(
    home: Home, seat: Seat, tmp_path: Path
):
    profile = seat.saved(home)
    b_user = f"{seat.username}-b"
    seat.server.add_person(b_user, "correct-horse-battery-staple-42", seat.slug, "contributor")
    b_key = (
        seat.server.manage("create_api_key", seat.slug, "--user", b_user).strip().splitlines()[-1]
    )
    agent_b = second_home(home, tmp_path, b_key, profile)
    task_id = anyio.run(create_task, seat)

    # Agent A: claim, then work, renewing what is due every third of the lease, until killed.
    a_env = {**home.env, "HEYAIRA_SESSION_REF": "agent-a-1"}
    heyaira = f"{sys.executable} -m heyaira_client"
    work = (
        f"{heyaira} claim --next --lease-seconds {LEASE} || exit 1\n"
        f"while true; do sleep {BEAT}; {heyaira} heartbeat --if-due; done\n"
    )
    agent_a = subprocess.Popen(
        ["sh", "-c", work], env=a_env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        expires_at = work_then_die(seat, agent_a, agent_b, task_id)
    finally:
        if agent_a.poll() is None:
            os.killpg(agent_a.pid, signal.SIGKILL)
            agent_a.wait(timeout=30)

    # B keeps asking; it gets the task once the server's clock has passed the lease's end.
    attempts = 0
    while True:
        attempts += 1
        taken = agent_b.cli("claim", "--next", "--session-ref", "agent-b-1")
        assert taken.returncode == 0, taken.stderr
        if taken.stdout.startswith("claimed"):
            break
        assert "nothing to claim" in taken.stdout
        assert attempts < 60, "the expired lease was never taken over"
        time.sleep(POLL)
    claimed_at = datetime.now().astimezone()
    assert claimed_at >= datetime.fromisoformat(expires_at)
    assert f"claimed {task_id}: in_progress, version 3" in taken.stdout
    b, session, _, _ = lease_of(seat, task_id)
    assert b_user in b
    assert session == "agent-b-1"

    # A restarted A, with its old version and session: refused with the pinned codes.
    late = home.cli(
        *("handoff", task_id, "--summary", "Finished it.", "--session-ref", "agent-a-1"),
        *("--version", "2", "--status", "done"),
    )
    assert late.returncode == 5, late.stdout
    assert "stale_version" in late.stderr
    beat = home.cli("heartbeat", task_id, "--session-ref", "agent-a-1")
    assert beat.returncode == 5, beat.stdout
    assert "lease_lost" in beat.stderr
    assert seat.counts()["receipts"] == 0
    assert lease_of(seat, task_id)[:2] == [b, "agent-b-1"]  # B's, untouched

    trail = audit_trail(seat, task_id)
    a = next(row[1] for row in trail if row[0] == "task_claim_next")
    claims = [row for row in trail if row[4] == task_id or row[0] == "lease_expired"]
    assert claims[0] == ["task_claim_next", a, "success", "", task_id]
    assert all(row[:3] == ["task_heartbeat", a, "success"] for row in claims[1:-4])
    assert claims[-4:] == [
        ["lease_expired", b, "success", "", f"{a}#agent-a-1"],
        ["task_claim_next", b, "success", "", task_id],
        ["task_update", a, "rejected", "stale_version", task_id],
        ["task_heartbeat", a, "rejected", "lease_lost", task_id],
    ]
    # B's empty-handed claims came between: each one a success with no task.
    empty = [row for row in trail if row[0] == "task_claim_next" and row[4] == ""]
    assert len(empty) == attempts  # the one while A worked, and every one but the last after
    print(f"B asked {attempts} times after the kill; lease ended {expires_at}")
