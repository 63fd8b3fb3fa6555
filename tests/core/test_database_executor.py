"""Database work has its own bounded executor: never more units at once than it has threads,
and a unit that cannot get a thread within the wait is refused `unavailable` (NoCapacity)
instead of queueing; a caller that stops waiting does not free its thread early. Of the
threads, at most `running` compute at once; a unit still running after SLOW_UNIT_SECONDS (it
waits on a lock) stops counting, so it never holds the others up."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from core.database import SLOW_UNIT_SECONDS, DatabaseExecutor, NoCapacity


def _blocking(release: threading.Event, running: list[int]) -> int:
    running.append(1)
    assert release.wait(10)
    return len(running)


def test_it_refuses_a_unit_when_no_thread_comes_free_in_time() -> None:
    executor = DatabaseExecutor(threads=2, wait_seconds=0.2)
    release = threading.Event()
    running: list[int] = []

    async def scenario() -> tuple[float, int]:
        busy = [
            asyncio.ensure_future(executor.run(lambda: _blocking(release, running)))
            for _ in range(2)
        ]
        await asyncio.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(NoCapacity) as refused:
            await executor.run(lambda: 0)
        waited = time.monotonic() - started
        assert refused.value.as_dict()["code"] == "unavailable"
        release.set()
        await asyncio.gather(*busy)
        return waited, await executor.run(lambda: 42)

    waited, later = asyncio.run(scenario())
    assert 0.15 <= waited < 2.0
    assert later == 42  # threads come back when their work is done


def test_a_caller_that_gives_up_keeps_its_thread_taken_until_the_work_ends() -> None:
    executor = DatabaseExecutor(threads=1, wait_seconds=0.2)
    release = threading.Event()
    running: list[int] = []

    async def scenario() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(executor.run(lambda: _blocking(release, running)), 0.1)
        # The abandoned unit still runs on the only thread: a new one is not let in.
        with pytest.raises(NoCapacity):
            await executor.run(lambda: 0)
        release.set()
        await asyncio.sleep(0.1)
        assert await executor.run(lambda: 7) == 7

    asyncio.run(scenario())
    assert running == [1]


def test_units_run_in_parallel_up_to_the_thread_count() -> None:
    executor = DatabaseExecutor(threads=4, wait_seconds=5)
    barrier = threading.Barrier(4, timeout=5)

    async def scenario() -> list[int]:
        return list(await asyncio.gather(*(executor.run(barrier.wait) for _ in range(4))))

    assert sorted(asyncio.run(scenario())) == [0, 1, 2, 3]


def test_at_most_running_units_run_at_once_while_they_are_quick() -> None:
    executor = DatabaseExecutor(threads=6, wait_seconds=5, running=2)
    lock = threading.Lock()
    now, most = [0], [0]

    def quick() -> None:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(SLOW_UNIT_SECONDS / 5)
        with lock:
            now[0] -= 1

    async def scenario() -> None:
        await asyncio.gather(*(executor.run(quick) for _ in range(12)))

    asyncio.run(scenario())
    assert most[0] == 2


def test_a_unit_waiting_on_a_lock_stops_holding_up_the_others() -> None:
    executor = DatabaseExecutor(threads=3, wait_seconds=5, running=1)
    release = threading.Event()
    running: list[int] = []

    async def scenario() -> float:
        held = asyncio.ensure_future(executor.run(lambda: _blocking(release, running)))
        await asyncio.sleep(0.01)
        started = time.monotonic()
        assert await executor.run(lambda: 5) == 5  # after SLOW_UNIT_SECONDS, not the 10 s wait
        waited = time.monotonic() - started
        release.set()
        await held
        return waited

    waited = asyncio.run(scenario())
    assert SLOW_UNIT_SECONDS / 2 <= waited < 2.0


def test_slow_units_still_count_against_the_threads() -> None:
    executor = DatabaseExecutor(threads=2, wait_seconds=0.3, running=1)
    release = threading.Event()
    running: list[int] = []

    async def scenario() -> None:
        busy = [
            asyncio.ensure_future(executor.run(lambda: _blocking(release, running)))
            for _ in range(2)
        ]
        await asyncio.sleep(SLOW_UNIT_SECONDS * 3)  # both are slow now: the gate is open
        with pytest.raises(NoCapacity):
            await executor.run(lambda: 0)  # but no thread is free
        release.set()
        await asyncio.gather(*busy)
        assert await executor.run(lambda: 9) == 9

    asyncio.run(scenario())
    assert running == [1, 1]
