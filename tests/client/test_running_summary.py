"""The running summary (docs/architecture.md) against a live server: one update in flight per agent
however many turns end at once, replies that are not summaries never stored, closing chatter
cut, a failing summarizer leaving the last good version, and the local-command summarizer."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import anyio
import pytest

from heyaira_client import (
    CommandSummarizer,
    HeyAira,
    RunningSummary,
    SummaryRequest,
    SummarySettings,
    Turn,
)
from tests.client.conftest import Seat

pytestmark = pytest.mark.live_server

GOOD = "# Running summary\n\n- Goal: ship the client.\n- Done: the journal.\n- Pending: hooks.\n"
EVERY_TWO = SummarySettings(every_person_turns=2, max_age_seconds=3600)


def conversation(person_turns: int) -> list[Turn]:
    turns: list[Turn] = []
    for number in range(person_turns):
        turns.append(Turn("person", f"Person turn {number}: please do step {number}."))
        turns.append(Turn("agent", f"Done step {number}."))
    return turns


def stored(seat: Seat, agent: str = "test-agent") -> tuple[int, str] | None:
    async def read() -> tuple[int, str] | None:
        async with HeyAira(seat.profile()) as heyaira:
            state = await heyaira.state_get(agent)
        return (state.version, state.body) if state else None

    return anyio.run(read)


def summary(seat: Seat, summarizer, tmp_path: Path, **kwargs) -> RunningSummary:
    return RunningSummary(
        seat.profile(), summarizer, settings=EVERY_TWO, lock_dir=tmp_path / "locks", **kwargs
    )


def test_concurrent_turns_never_start_two_updates_for_one_agent(seat: Seat, tmp_path: Path):
    release = threading.Event()
    calls: list[SummaryRequest] = []

    def slow(request: SummaryRequest) -> str:
        calls.append(request)
        assert release.wait(60)
        return GOOD

    # Two harness objects for one agent (as two processes would be), sixteen turns ending at once.
    harnesses = [summary(seat, slow, tmp_path), summary(seat, slow, tmp_path)]
    barrier = threading.Barrier(16)
    started: list[bool] = []

    def end_turn(number: int) -> None:
        barrier.wait()
        started.append(harnesses[number % 2].after_turn(conversation(3)))

    threads = [threading.Thread(target=end_turn, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    while not calls:  # the one update reaches its summarizer
        threading.Event().wait(0.05)
    # A turn that ends mid-update is not queued behind it: it just returns.
    assert not harnesses[0].after_turn(conversation(5))
    release.set()
    for harness in harnesses:
        harness.wait(60)

    assert started.count(True) == 1
    assert len(calls) == 1
    assert stored(seat) == (1, GOOD.strip())
    # The next turn's check picks the conversation up from where the update left it.
    harness = next(h for h in harnesses if h.started)
    assert not harness.after_turn(conversation(4))  # one person turn since: not due
    assert harness.after_turn(conversation(5))
    harness.wait(60)
    assert len(calls) == 2
    assert (stored(seat) or (0, ""))[0] == 2


@pytest.mark.parametrize(
    "reply",
    [
        "# Running summary\n\nI'm sorry, but I can't help with summarizing this conversation.",
        "# Running summary\n\nError: 529 overloaded_error",
        'Traceback (most recent call last):\n  File "summarize.py", line 3',
        "Here is the summary you asked for:\n\n- Goal: ship the client.",
        "# Running summary\n\n" + "- a long line of summary text that goes on\n" * 400,
        "# Running summary\n",
    ],
    ids=["refusal", "error-text", "traceback", "no-heading", "oversize", "empty"],
)
def test_a_reply_that_is_not_a_summary_is_never_stored(seat: Seat, tmp_path: Path, reply: str):
    first = summary(seat, lambda request: GOOD, tmp_path)
    assert first.after_turn(conversation(2))
    first.wait(60)
    assert first.last_error is None

    bad = summary(seat, lambda request: reply, tmp_path)
    assert bad.after_turn(conversation(2), force=True)
    bad.wait(60)

    assert bad.last_error is not None
    assert stored(seat) == (1, GOOD.strip())  # the last good version stays
    assert seat.counts()["states"] == 1


def test_closing_chatter_addressed_to_the_reader_is_cut(seat: Seat, tmp_path: Path):
    chatty = GOOD + "\nLet me know if you would like me to expand any of these points!\n"
    harness = summary(seat, lambda request: chatty, tmp_path)

    assert harness.after_turn(conversation(2))
    harness.wait(60)

    assert harness.last_error is None
    assert stored(seat) == (1, GOOD.strip())


def test_a_failing_summarizer_leaves_the_last_good_version(seat: Seat, tmp_path: Path):
    good = summary(seat, lambda request: GOOD, tmp_path)
    assert good.after_turn(conversation(2))
    good.wait(60)

    def broken(request: SummaryRequest) -> str:
        raise ConnectionError("the model endpoint is down")

    failing = summary(seat, broken, tmp_path)
    assert failing.after_turn(conversation(4), force=True)
    failing.wait(60)
    command = summary(
        seat, CommandSummarizer([sys.executable, "-c", "raise SystemExit(3)"]), tmp_path
    )
    assert command.after_turn(conversation(4), force=True)
    command.wait(60)

    assert "the model endpoint is down" in (failing.last_error or "")
    assert "exited with 3" in (command.last_error or "")
    assert stored(seat) == (1, GOOD.strip())


SUMMARIZER = r"""
import json, sys
prompt = sys.stdin.read()
with open(sys.argv[1], "w") as seen:
    seen.write(prompt)
turns = [line for line in prompt.splitlines() if line.startswith("[person]")]
print("# Running summary\n")
print(f"- Goal: keep the project moving ({len(turns)} person turns seen).")
print("- Pending: the next step.")
"""


def test_the_command_summarizer_gets_the_previous_summary_and_the_newest_turns(
    seat: Seat, tmp_path: Path
):
    seen = tmp_path / "prompt.txt"
    command = CommandSummarizer([sys.executable, "-c", SUMMARIZER, str(seen)])
    settings = SummarySettings(every_person_turns=2, budget_chars=200)
    first = RunningSummary(seat.profile(), command, settings=settings, lock_dir=tmp_path / "locks")
    assert first.after_turn(conversation(2))
    first.wait(60)
    assert first.last_error is None
    assert "(none yet)" in seen.read_text()

    long_talk = conversation(40)
    assert first.after_turn(long_talk)
    first.wait(60)

    prompt = seen.read_text()
    version, body = stored(seat) or (0, "")
    assert version == 2
    assert "person turns seen" in body
    assert "- Goal: keep the project moving (2 person turns seen)." in prompt  # the previous one
    shown = prompt.split("## Newest turns, oldest first", 1)[1]
    assert "Done step 39." in shown  # the newest turn
    assert "Person turn 0:" not in shown  # the oldest fell out of the 200-character budget
    assert sum(len(line) for line in shown.splitlines()) < 200 + 40 * 10
    assert json.loads(json.dumps(body))  # a plain string, as stored
