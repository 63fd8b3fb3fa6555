"""The client reaches the whole protocol a session uses: memory_search finds decisions and notes
(typed as the server sends them), and task_create and task_update set and clear a task's
blocked_by, which decides whether it is ready."""

from __future__ import annotations

import anyio
import pytest

from heyaira_client import HeyAira, MemorySearch
from tests.client.conftest import Seat

pytestmark = pytest.mark.live_server


def test_memory_search_finds_a_decision_by_its_words(seat: Seat):
    async def scenario() -> tuple[MemorySearch, str]:
        async with HeyAira(seat.profile()) as heyaira:
            await heyaira.verify()
            decided = await heyaira.decide(
                "Keep state in PostgreSQL",
                "Production keeps its continuity state in PostgreSQL.",
                rationale="One store for transactions and search.",
                source="design review",
            )
            await heyaira.note("The runbook is docs/operating.md.", title="Runbook")
            return await heyaira.memory_search("PostgreSQL", kind="decision", limit=5), decided.id

    found, decided = anyio.run(scenario)
    assert found.query == "PostgreSQL"
    assert [hit.id for hit in found.results] == [decided]
    (hit,) = found.results
    assert (hit.kind, hit.title) == ("decision", "Keep state in PostgreSQL")
    assert "PostgreSQL" in hit.preview
    assert hit.supersedes is None


def test_blocked_by_is_set_on_create_and_cleared_on_update(seat: Seat):
    async def scenario() -> tuple[list[bool], list[object]]:
        async with HeyAira(seat.profile()) as heyaira:
            await heyaira.verify()
            first = await heyaira.task_create(title="Build the API", description="The API.")
            second = await heyaira.task_create(
                title="Ship the screens", description="The screens.", blocked_by=[first.id]
            )
            waiting = (await heyaira.task_get(second.id)).task
            cleared = await heyaira.task_update(
                second.id, expected_version=waiting.version, blocked_by=[]
            )
            again = await heyaira.task_update(
                second.id, expected_version=cleared.task.version, blocked_by=[first.id]
            )
        seen = [waiting.raw["ready"], cleared.task.raw["ready"], again.task.raw["ready"]]
        return seen, [waiting.raw["blocked_by"], cleared.task.raw["blocked_by"], first.id]

    ready, (before, after, first) = anyio.run(scenario)
    assert ready == [False, True, False]
    assert before == [first]
    assert after == []
