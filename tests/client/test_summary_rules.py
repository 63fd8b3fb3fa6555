"""The running summary's rules without a server: what a reply must be to be stored, what is cut,
which turns the summarizer sees, and when an update is due."""

from __future__ import annotations

from pathlib import Path

import pytest

from heyaira_client import (
    Profile,
    RunningSummary,
    SummaryRejected,
    SummarySettings,
    Turn,
    accept_summary,
)
from heyaira_client.summary import newest_within

GOOD = "# Running summary\n\n- Goal: ship it.\n- Done: the journal.\n"


def test_it_accepts_a_summary_and_keeps_a_list_item_that_mentions_an_error():
    body = "# Running summary\n\n- Error: the build broke on CI; fixed in abc123.\n- Next: docs."
    assert accept_summary(GOOD) == GOOD.strip()
    assert accept_summary(body) == body


@pytest.mark.parametrize(
    "reply",
    [
        "Sure! Here is the summary:\n# Running summary\n- a",
        "# Running summary\n\nSorry, I cannot summarize this.",
        "# Running summary\n\nAs an AI, I do not keep summaries.",
        "# Running summary: error 500",
        '# Running summary\n\n{"error": {"type": "overloaded"}}',
        "# Running summary\n\n   \n",
    ],
)
def test_it_rejects_what_is_not_a_summary(reply: str):
    with pytest.raises(SummaryRejected):
        accept_summary(reply)


def test_it_rejects_a_reply_over_the_cap_once_chatter_is_cut():
    items = "".join(f"- item {n}\n" for n in range(20))
    reply = f"# Running summary\n\n{items}\nHope this helps, let me know!"
    assert accept_summary(reply, max_chars=len(f"# Running summary\n\n{items}".strip()))
    with pytest.raises(SummaryRejected, match="cap"):
        accept_summary(reply, max_chars=100)


def test_it_cuts_only_a_closing_paragraph_addressed_to_the_reader():
    chatty = GOOD + "\nWould you like me to add more detail?\n"
    notes = GOOD + "\nThe team prefers small commits.\n"
    section = GOOD + "\n## Preferences\n\nYou asked for small commits.\n"
    assert accept_summary(chatty) == GOOD.strip()
    assert accept_summary(notes) == notes.strip()
    assert accept_summary(section) == section.strip()  # a heading after the list is content


def test_the_summarizer_sees_the_newest_turns_within_the_budget_oldest_first():
    turns = [Turn("person", "a" * 50), Turn("agent", "b" * 50), Turn("person", "c" * 50)]
    assert newest_within(turns, 120) == (turns[1], turns[2])
    assert newest_within(turns, 1000) == tuple(turns)
    (cut,) = newest_within([Turn("person", "x" * 500)], 100)
    assert cut.text == "x" * 100


def test_an_update_is_due_after_enough_person_turns_or_when_the_last_one_is_old(tmp_path: Path):
    now = [10_000.0]
    profile = Profile(
        name="p", url="http://127.0.0.1:1/mcp", instance="i", project="p", credential="env:K"
    )
    summary = RunningSummary(
        profile,
        lambda request: GOOD,
        settings=SummarySettings(every_person_turns=3, max_age_seconds=600),
        lock_dir=tmp_path,
        clock=lambda: now[0],
    )
    talk = [Turn("person", "hi"), Turn("agent", "hello")] * 5
    assert not summary.due(talk[:4])  # 2 person turns
    assert summary.due(talk[:6])  # 3 person turns
    summary.know(version=4, created_at="1970-01-01T02:40:00Z")  # 9,600 s: 400 s old
    assert not summary.due(talk[:2])
    now[0] += 300  # 700 s old
    assert summary.due(talk[:2])
    assert not summary.due([])  # no person turn since: nothing to summarize
