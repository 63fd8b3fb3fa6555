"""runtime.workers.BalancedUvicornWorker under a real gunicorn master with two workers: new
connections go to the worker holding the fewest, also after connections close and after a worker
is killed; and the table of counts they share (runtime.worker_loads)."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime import heap
from runtime.worker_loads import WorkerLoads
from tests.live import free_port

REPO = Path(__file__).resolve().parents[2]


class Gunicorn:
    def __init__(self, tmp_path: Path, workers: int = 2) -> None:
        self.port = free_port()
        self.log = tmp_path / "gunicorn.log"
        command = [str(Path(sys.executable).parent / "gunicorn"), "tests.runtime.pid_app:app"]
        command += ["-k", "runtime.workers.BalancedUvicornWorker", "-w", str(workers)]
        command += ["--bind", f"127.0.0.1:{self.port}", "--graceful-timeout", "5"]
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(
                command, cwd=REPO, stdout=output, stderr=subprocess.STDOUT
            )
        self.workers = workers
        self.wait_for_workers()

    def worker_pids(self) -> set[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return {int(pid) for pid in children.read_text().split()}

    def wait_for_workers(self, without: int | None = None) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            pids = self.worker_pids()
            if len(pids) == self.workers and without not in pids and self._answers():
                return
            time.sleep(0.2)
        raise AssertionError(f"the workers did not come up:\n{self.log.read_text()}")

    def _answers(self) -> bool:
        """Every worker serves: probes held open one after another reach all of them (the one
        with fewer connections takes each next probe; a worker still starting takes none)."""
        pids = self.worker_pids()
        probes: list[http.client.HTTPConnection] = []
        answered: set[int] = set()
        try:
            while answered != pids and len(probes) < 40:
                probes.append(connect(self.port))
                answered.add(ask(probes[-1]))
        except OSError:
            return False
        finally:
            for probe in probes:
                probe.close()
        time.sleep(0.2)  # the workers see the probes close: their counts are as before
        return answered == pids

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
                raise AssertionError(f"gunicorn did not stop:\n{self.log.read_text()}") from None
        return self.process.returncode


@pytest.fixture
def gunicorn(tmp_path: Path) -> Iterator[Gunicorn]:
    server = Gunicorn(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def connect(port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=10)


def ask(connection: http.client.HTTPConnection) -> int:
    """The pid of the worker holding `connection` (kept open: HTTP/1.1 keep-alive)."""
    connection.request("GET", "/")
    answer = connection.getresponse()
    assert answer.status == 200
    return int(answer.read())


def open_connections(port: int, count: int) -> list[tuple[http.client.HTTPConnection, int]]:
    """`count` connections opened one after another, each asked once and left open."""
    opened = []
    for _ in range(count):
        connection = connect(port)
        opened.append((connection, ask(connection)))
    return opened


def spread(opened: list[tuple[http.client.HTTPConnection, int]]) -> Counter[int]:
    return Counter(pid for _, pid in opened)


def test_connections_opened_one_after_another_are_shared_evenly(gunicorn: Gunicorn) -> None:
    opened = open_connections(gunicorn.port, 24)
    counts = spread(opened)
    # With a listener per worker (SO_REUSEPORT) 32 connections split 19/13, 12/20 and 9/23.
    assert set(counts) == gunicorn.worker_pids()
    assert max(counts.values()) - min(counts.values()) <= 2, counts
    # Held connections keep being served by the same worker.
    assert all(ask(connection) == pid for connection, pid in opened)


def test_a_worker_whose_connections_closed_takes_the_next_ones(gunicorn: Gunicorn) -> None:
    opened = open_connections(gunicorn.port, 12)
    emptied = opened[0][1]
    for connection, pid in opened:
        if pid == emptied:
            connection.close()
    kept = [(c, pid) for c, pid in opened if pid != emptied]
    time.sleep(0.5)  # the worker sees the connections close
    more = open_connections(gunicorn.port, len(opened) - len(kept))
    # The emptied worker had none: it takes (nearly) all of them, and the spread is even again.
    assert spread(more)[emptied] >= len(more) - 2, spread(more)
    counts = spread(kept + more)
    assert max(counts.values()) - min(counts.values()) <= 2, counts


def test_a_killed_worker_is_replaced_and_its_successor_is_filled_first(gunicorn: Gunicorn) -> None:
    opened = open_connections(gunicorn.port, 10)
    killed = opened[0][1]
    survivor = next(pid for pid in gunicorn.worker_pids() if pid != killed)
    os.kill(killed, signal.SIGKILL)
    gunicorn.wait_for_workers(without=killed)
    successor = next(pid for pid in gunicorn.worker_pids() if pid != survivor)
    held = [(c, pid) for c, pid in opened if pid == survivor]
    time.sleep(0.5)  # the survivor holds its own connections, the successor none
    more = open_connections(gunicorn.port, 10)
    counts = spread(held + more)
    assert killed not in counts
    assert set(counts) == {survivor, successor}, counts
    assert max(counts.values()) - min(counts.values()) <= 2, counts


def test_each_worker_serves_with_its_loaded_app_frozen_out_of_collections(
    gunicorn: Gunicorn,
) -> None:
    answers = set()
    for connection, _ in open_connections(gunicorn.port, 4):
        connection.request("GET", "/heap")
        answers.add(connection.getresponse().read().decode())
    frozen = {int(answer.split()[0]) for answer in answers}
    thresholds = {int(answer.split()[1]) for answer in answers}
    # The loaded app (uvicorn, gunicorn and this module's imports) is thousands of objects.
    assert min(frozen) > 10_000, answers
    assert thresholds == {heap.YOUNGEST_THRESHOLD}, answers


def test_gunicorn_stops_cleanly_with_idle_keep_alive_connections_open(tmp_path: Path) -> None:
    server = Gunicorn(tmp_path)
    opened = open_connections(server.port, 6)
    started = time.monotonic()
    assert server.stop() == 0, server.log.read_text()
    assert time.monotonic() - started < 15
    for connection, _ in opened:
        connection.close()


# --- the shared table -----------------------------------------------------------------------


def _claim_in_a_child_that_exits(loads: WorkerLoads, connections: int) -> int:
    """Fork a process that claims a slot, publishes `connections` and ends; its pid."""
    child = os.fork()
    if child == 0:  # pragma: no cover (the child)
        try:
            loads.claim().publish(connections)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    return child


def test_a_slot_of_an_ended_process_is_claimed_again_and_its_count_ignored() -> None:
    loads = WorkerLoads(slots=4)
    ended = _claim_in_a_child_that_exits(loads, connections=0)
    assert loads.holders() == [(ended, 0)]
    mine = loads.claim()
    mine.publish(5)
    # The ended process's slot was free again: this process took it over.
    assert mine.index == 0
    assert loads.holders() == [(os.getpid(), 5)]
    assert mine.least_loaded()


def test_only_the_worker_with_the_fewest_connections_is_least_loaded() -> None:
    loads = WorkerLoads(slots=4)
    mine = loads.claim()
    other = loads.claim()  # the same process claims again: a second slot is not handed out
    assert other.index == mine.index
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child: a live worker holding 2 connections)
        loads.claim().publish(2)
        os.write(writer, b"x")
        time.sleep(30)
        os._exit(0)
    try:
        assert os.read(reader, 1) == b"x"
        mine.publish(3)
        assert not mine.least_loaded()
        mine.publish(2)
        assert mine.least_loaded()  # a tie: both may accept
        mine.release()
        assert [pid for pid, _ in loads.holders()] == [child]
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(reader)
        os.close(writer)


def test_a_table_with_every_slot_held_by_a_live_process_refuses_another() -> None:
    loads = WorkerLoads(slots=1)
    loads.claim()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child)
        try:
            loads.claim()
        except RuntimeError:
            os._exit(7)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 7
