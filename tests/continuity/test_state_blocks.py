"""What a running summary must look like to be stored (docs/architecture.md): the heading, at most
12,000 characters, never a refusal or an error text, no closing chatter to the reader."""

from __future__ import annotations

import pytest

from continuity.models import STATE_BODY_MAX, StateVersion
from continuity.services import state_put
from tests.continuity.helpers import rejected
from tests.factories import World, wc

HEADING = "# Running summary"


def _stored(world: World, body: str) -> str:
    owner = world.caller("owner")
    state_put(owner, write_context=wc(owner), agent="codex", body=body)
    return StateVersion.objects.get().body


def _refusal(world: World, body: str) -> str:
    owner = world.caller("owner")
    error = rejected(
        "validation_error", state_put, owner, write_context=wc(owner), agent="codex", body=body
    )
    assert not StateVersion.objects.exists()
    assert list(error.details["fields"]) == ["body"]
    return str(error.details["fields"]["body"])


@pytest.mark.parametrize(
    "body",
    [
        "Running summary\n- a",
        "## Running summary\n- a",
        "# Summary\n- a",
        "- a\n# Running summary\n- b",
        "# running summary\n- a",
    ],
)
def test_it_requires_the_heading_on_the_first_line(world: World, body: str) -> None:
    assert _refusal(world, body) == "must start with the heading '# Running summary'"


@pytest.mark.parametrize("body", [HEADING, HEADING + "\n\n   \n", "\ufeff" + HEADING + "\n"])
def test_it_refuses_a_heading_with_nothing_under_it(world: World, body: str) -> None:
    assert _refusal(world, body) == "has a heading but no summary under it"


@pytest.mark.parametrize(
    "body",
    [
        "I'm sorry, but I can't summarize this conversation.",
        HEADING + "\nI'm sorry, but I can't summarize this conversation.",
        HEADING + "\n\nSorry, I cannot do that.",
        HEADING + "\nI cannot help with that request.",
        HEADING + "\nAs an AI language model, I do not keep summaries.",
        HEADING + "\nUnfortunately, I was unable to read the transcript.",
        HEADING + "\nError: 429 Too Many Requests",
        HEADING + "\nerror 500",
        HEADING + "\nAn error occurred while generating the summary.",
        HEADING + "\nTraceback (most recent call last):\n  File 'x.py'",
        HEADING + "\nException: context window exceeded",
        HEADING + "\nRate limit exceeded, retry later.",
        HEADING + "\nInternal Server Error",
        HEADING + '\n{"error": {"message": "overloaded"}}',
        HEADING + ": I'm sorry, I can't do that.\n- nothing",
        HEADING + "\nRequest failed with status 502",
    ],
)
def test_it_refuses_refusals_and_error_texts(world: World, body: str) -> None:
    problem = _refusal(world, body)
    assert problem in (
        "looks like a refusal or an error message, not a summary",
        "must start with the heading '# Running summary'",
    )
    if body.startswith(HEADING):
        assert problem == "looks like a refusal or an error message, not a summary"


def test_it_accepts_a_first_list_item_that_reports_an_error(world: World) -> None:
    body = HEADING + "\n- Error: the nightly build broke on the migration\n- Fixed in a1b2c3d"
    assert _stored(world, body) == body


def test_it_accepts_a_summary_that_mentions_errors_further_down(world: World) -> None:
    body = HEADING + "\n## Done\n- Fixed the error: 500 on login\n- Sorry-path tests added"
    assert _stored(world, body) == body


@pytest.mark.parametrize(
    "chatter",
    [
        "Let me know if you want more detail.",
        "Hope this helps!",
        "Feel free to ask for changes.",
        "Would you like me to continue with the tests?",
        "If you need anything else, I can also draft the README.",
        "Let me know if you want more detail.\n\nHappy to help!",
    ],
)
def test_it_cuts_closing_chatter_to_the_reader_after_the_final_list(
    world: World, chatter: str
) -> None:
    summary = HEADING + "\n## Pending\n- Write tests\n- Review"
    assert _stored(world, summary + "\n\n" + chatter) == summary


def test_it_keeps_continuation_lines_of_the_last_item(world: World) -> None:
    summary = HEADING + "\n- Write tests\n  for the whole table you drew"
    assert _stored(world, summary + "\n\nLet me know if you want more.") == summary


@pytest.mark.parametrize(
    "tail",
    [
        "## Preferences\nThe user wants you to keep answers short.",
        "The build is green on both databases.",
    ],
)
def test_it_keeps_a_closing_section_or_a_paragraph_not_addressed_to_the_reader(
    world: World, tail: str
) -> None:
    body = HEADING + "\n- Write tests\n\n" + tail
    assert _stored(world, body) == body


def test_it_keeps_a_summary_without_any_list_as_it_is(world: World) -> None:
    body = HEADING + "\nWe are halfway; let me know is what the user said."
    assert _stored(world, body) == body


def test_it_stores_the_body_trimmed_with_unix_line_ends(world: World) -> None:
    assert _stored(world, "\ufeff  " + HEADING + "\r\n- a\r\n- b\r\n\r\n") == HEADING + "\n- a\n- b"


def test_it_accepts_exactly_the_maximum_length(world: World) -> None:
    body = HEADING + "\n- " + "é" * (STATE_BODY_MAX - len(HEADING) - 3)
    assert len(body) == STATE_BODY_MAX
    assert _stored(world, body) == body


def test_it_refuses_one_character_more(world: World) -> None:
    body = HEADING + "\n- " + "x" * (STATE_BODY_MAX - len(HEADING) - 2)
    assert _refusal(world, body) == (
        f"is {STATE_BODY_MAX + 1} characters; the limit is {STATE_BODY_MAX}"
    )


def test_the_limit_applies_after_the_chatter_is_cut(world: World) -> None:
    summary = HEADING + "\n- " + "x" * (STATE_BODY_MAX - len(HEADING) - 3)
    assert _stored(world, summary + "\n\nLet me know if you want the rest.") == summary
