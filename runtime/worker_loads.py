"""How many connections each worker of one gunicorn master holds, in memory they all share.

The master makes the table before it forks any worker (runtime.workers); each worker claims a
slot (its pid and its count) when it starts and writes its count whenever a connection opens or
closes. A slot whose process is gone is free again: a worker that was killed is replaced by one
that takes its slot, and until then its count is ignored.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os

SLOTS = 256
_CLAIM_WAIT_SECONDS = 1.0


class NoFreeSlot(RuntimeError):
    pass


class WorkerLoads:
    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = slots
        # [highest slot in use + 1, then (pid, connections) per slot]
        self._table = multiprocessing.RawArray(ctypes.c_long, 1 + 2 * slots)
        self._claiming = multiprocessing.Lock()

    def claim(self) -> LoadSlot:
        """A slot for this process: a free one, or one whose process has ended."""
        pid = os.getpid()
        # A worker killed halfway through a claim would hold the lock forever: after a second
        # the claim goes ahead without it (two workers starting in that same second may then
        # share a slot, which only blurs the balance).
        locked = self._claiming.acquire(timeout=_CLAIM_WAIT_SECONDS)
        try:
            for index in range(self.slots):
                holder = self._table[1 + 2 * index]
                if holder in (0, pid) or not process_alive(holder):
                    self._table[1 + 2 * index] = pid
                    self._table[2 + 2 * index] = 0
                    self._table[0] = max(self._table[0], index + 1)
                    return LoadSlot(self, index, pid)
        finally:
            if locked:
                self._claiming.release()
        raise NoFreeSlot(f"more than {self.slots} workers share one connection table")

    def holders(self) -> list[tuple[int, int]]:
        """(pid, connections) of every claimed slot, live or not."""
        table = self._table
        pairs = ((table[1 + 2 * index], table[2 + 2 * index]) for index in range(table[0]))
        return [(pid, count) for pid, count in pairs if pid]


class LoadSlot:
    def __init__(self, loads: WorkerLoads, index: int, pid: int) -> None:
        self._table = loads._table
        self.index = index
        self.pid = pid

    def publish(self, connections: int) -> None:
        self._table[2 + 2 * self.index] = connections

    def least_loaded(self) -> bool:
        """No other live worker holds fewer connections than this one."""
        table = self._table
        mine = table[2 + 2 * self.index]
        for index in range(table[0]):
            if index == self.index or table[2 + 2 * index] >= mine:
                continue
            holder = table[1 + 2 * index]
            if holder and process_alive(holder):
                return False
        return True

    def release(self) -> None:
        if self._table[1 + 2 * self.index] == self.pid:
            self._table[2 + 2 * self.index] = 0
            self._table[1 + 2 * self.index] = 0


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
