"""keep_lease's schedule: beats on a fixed cadence, a passing fault tried again soon, a lost
lease ends the beats. A stand-in session answers the heartbeats here, so that each answer can
be slow or a fault on cue; test_lease_long_work runs keep_lease against a live server.

The margins below are a third of a beat or more: wide enough for a busy machine, narrow enough
that the schedule the test rules out (sleeping a whole beat after each answer, or waiting a whole
beat after a fault) fails it."""

from __future__ import annotations

from typing import Any, cast

import anyio

from heyaira_client import HeyAira, keep_lease
from heyaira_client.errors import ToolError
from heyaira_client.leases import KeptLease

EVERY = 1.0


class StandIn:
    """Answers task_heartbeat from a script: a number of seconds to take, or an error code."""

    def __init__(self, script: list[float | str]) -> None:
        self.script = script
        self.called_at: list[float] = []

    async def task_heartbeat(self, task_id: str, *, session_ref: str) -> dict[str, Any]:
        self.called_at.append(anyio.current_time())
        step = self.script.pop(0) if self.script else 0.0
        if isinstance(step, str):
            raise ToolError(step, "scripted")
        await anyio.sleep(step)
        return {"task_id": task_id}


def run(script: list[float | str], seconds: float) -> tuple[StandIn, KeptLease, float]:
    """keep_lease for `seconds` against the script: the stand-in, the lease kept, its start."""
    stand_in = StandIn(script)

    async def main() -> tuple[KeptLease, float]:
        started = anyio.current_time()
        session = cast(HeyAira, stand_in)
        async with keep_lease(session, "task-1", session_ref="s", every=EVERY) as kept:
            with anyio.move_on_after(seconds):
                await kept.lost_event.wait()
        return kept, started

    kept, started = anyio.run(main)
    return stand_in, kept, started


def test_a_slow_answer_does_not_push_the_next_beat_back() -> None:
    stand_in, kept, started = run([0.7, 0.0, 0.0], seconds=2.5)
    first, second = stand_in.called_at[:2]
    assert first - started >= EVERY
    # A fixed cadence sends the second beat one beat after the first (1.0 s); sleeping a beat
    # after each answer would send it 1.7 s after.
    assert second - first < EVERY + 0.35
    assert kept.beats == 2
    assert not kept.lost


def test_an_unavailable_answer_is_tried_again_within_a_quarter_beat() -> None:
    stand_in, kept, _ = run(["unavailable", 0.0], seconds=1.6)
    failed, retried = stand_in.called_at[:2]
    assert retried - failed < EVERY * 0.6  # a quarter of a beat, not the next beat
    assert kept.beats == 1
    assert not kept.lost


def test_another_refusal_waits_for_the_next_beat() -> None:
    stand_in, kept, _ = run(["forbidden", 0.0], seconds=2.5)
    refused, next_try = stand_in.called_at[:2]
    assert next_try - refused > EVERY * 0.6  # not hammered: a refusal will not pass by itself
    assert kept.beats == 1


def test_a_lost_lease_ends_the_beats_and_says_so() -> None:
    stand_in, kept, _ = run(["lease_lost"], seconds=3.0)
    assert kept.lost
    assert kept.lost_event.is_set()
    assert len(stand_in.called_at) == 1  # no beat after the loss
    assert kept.beats == 0
