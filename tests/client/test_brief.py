"""The brief `heyaira context` prints and the session hooks inject is the server's: its `resume`
prompt, the same text for every client that asks for it (the server's side, and what the brief
says, is tests/continuity/test_brief.py). Through the CLI it still says what it leaves out: a
task waiting on others says so and names what it waits on, and a list the server cut ends with
"… and N more"."""

from __future__ import annotations

import json

import anyio
import pytest

from heyaira_client import HeyAira
from heyaira_client.hooks import session_start_output
from tests.client.conftest import Home, Seat

FILLERS = 22  # open tasks waiting on the first one: 23 open, 20 shown by default


async def _tasks(seat: Seat) -> dict[str, str]:
    async with HeyAira(seat.profile()) as heyaira:
        await heyaira.verify()
        first = (await heyaira.task_create(title="Build the API", description="The API.")).id
        for number in range(FILLERS):
            title = f"Ship screen {number}"
            await heyaira.task_create(title=title, description=title, blocked_by=[first])
    return {"first": first}


@pytest.mark.live_server
def test_the_brief_shows_readiness_and_what_it_leaves_out(home: Home, seat: Seat):
    seat.saved(home)
    ids = anyio.run(_tasks, seat)

    done = home.cli("context")

    assert done.returncode == 0, done.stderr
    brief = done.stdout
    assert "## Open tasks (23, 1 ready)" in brief
    tasks = brief.split("## Open tasks", 1)[1]
    entries = [line for line in tasks.splitlines() if line.startswith("- [")]
    assert len(entries) == 20
    assert entries[0].startswith("- [ready] Build the API")
    waiting = [line for line in entries if line.startswith("- [todo, waiting on 1] Ship screen")]
    assert len(waiting) == 19
    assert f"  waiting on: Build the API (`{ids['first']}`)" in tasks
    assert "- … and 3 more open tasks (`task_list` lists them)" in tasks
    assert "- [todo]" not in tasks  # no waiting task passes for a plain todo


async def _prompt_text(seat: Seat) -> str:
    """What prompts/get resume returns, asked through the official SDK as any client asks."""
    async with HeyAira(seat.profile()) as heyaira:
        await heyaira.verify()
        await heyaira.note("The runbook is docs/operating.md.", title="Runbook")

        async def get() -> str:
            result = await heyaira._in_session(lambda client: client.get_prompt("resume"))
            return str(result.messages[0].content.text)  # type: ignore[union-attr]

        return await get()


@pytest.mark.live_server
def test_the_session_start_hook_injects_the_text_of_the_resume_prompt(home: Home, seat: Seat):
    seat.saved(home)
    prompt = anyio.run(_prompt_text, seat)
    assert "**Runbook**: The runbook is docs/operating.md." in prompt

    started = session_start_output("work", {"source": "startup"}, timeout=30)

    assert started["hookSpecificOutput"]["additionalContext"] == prompt
    # And the command a person runs prints the same text.
    done = home.cli("context")
    assert done.returncode == 0, done.stderr
    assert done.stdout == prompt
    raw = json.loads(home.cli("context", "--json").stdout)  # --json: the two results as sent
    assert raw["identity"]["project"]["slug"] == seat.slug
