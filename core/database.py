"""Database work from async code, and database faults as the retryable error `unavailable`.

- One bounded executor per process runs ORM work, with as many threads as the connection pool
  has connections. A lock held on one table can then stall only the calls that wait for it (and
  only until lock_timeout), never a thread pool that everything else shares. A call that gets no
  thread within DATABASE_POOL_TIMEOUT_MS is answered `unavailable` instead of queueing for ever.
  Of those threads, at most DATABASE_CONCURRENCY run at once: the units are short and mostly
  Python, and more of them at once only contend for the interpreter (ten at once doubled the
  p95 latency at 32 clients). A unit still running after SLOW_UNIT_SECONDS stops counting,
  as it is waiting (on a lock, or a long query) rather than computing, so it holds no one up.
- `unavailable_from(error)`: a dead, refused or exhausted connection, or a lock or statement
  timeout, becomes Unavailable; anything else stays what it is.
- `retry_lost_connection(...)`: work that is safe to repeat runs once more on a fresh connection
  when a restart, a failover or an idle timeout killed the backend under it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import psycopg
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections
from django.db import connection as default_connection
from psycopg_pool import PoolTimeout

from core.errors import Unavailable

logger = logging.getLogger(__name__)

R = TypeVar("R")

# Threads when no pool sizes them (SQLite, or DATABASE_POOL_SIZE=0).
DEFAULT_THREADS = 10
# SQLSTATEs of a timeout or a lost race: the connection is fine, the statement was not done.
TIMEOUT_STATES = frozenset({"55P03", "57014", "40P01", "40001"})
# SQLSTATEs of a backend that went away (class 08, shutdown, not yet accepting connections).
GONE_STATES = frozenset({"57P01", "57P02", "57P03"})


class NoCapacity(Unavailable):
    """No database thread came free in time; nothing was sent to the database."""


def unavailable_from(error: BaseException) -> Unavailable | None:
    """The `unavailable` answer for a database fault, or None when `error` is something else.

    A fault of the connection itself also has the pool's idle connections tested before the
    next unit of work (purge_dead_connections): where one backend died, others did too."""
    if isinstance(error, Unavailable):
        return error
    faults = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
    if not isinstance(error, faults) and not desynced(error):
        return None
    if unreachable(error):
        _trouble.set()
    return Unavailable()


def unreachable(error: BaseException) -> bool:
    """A fault of the connection itself (not a timeout on a working one): writing anything
    else now, such as the audit row of this failure, would only wait for it again."""
    faults = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
    state = getattr(_driver_error(error), "sqlstate", None)
    return (isinstance(error, faults) and state not in TIMEOUT_STATES) or desynced(error)


def desynced(error: BaseException) -> bool:
    """psycopg's own InternalError, with no SQLSTATE from a server: the connection's protocol
    state no longer matches the server's ("received 2 results from command 'BEGIN'", seen
    behind PgBouncer when a server connection died under a multi-statement query). The
    connection is unusable; a fresh one may well succeed."""
    cause = _driver_error(error)
    return isinstance(cause, psycopg.InternalError) and cause.sqlstate is None


def connection_lost(error: BaseException) -> bool:
    """Whether the connection died under the work (and a fresh one may well succeed)."""
    cause = _driver_error(error)
    if isinstance(cause, PoolTimeout):
        return False  # the pool already waited its whole timeout for a connection
    if isinstance(cause, psycopg.InterfaceError) or desynced(error):
        return True
    if isinstance(cause, psycopg.OperationalError):
        state = cause.sqlstate
        return state is None or state.startswith("08") or state in GONE_STATES
    return isinstance(error, InterfaceError)  # Django's own "connection already closed"


def _driver_error(error: BaseException) -> BaseException:
    """Django wraps the driver's exception; the driver's carries the SQLSTATE."""
    cause = error.__cause__
    return cause if isinstance(cause, psycopg.Error) else error


def retry_lost_connection(
    function: Callable[[], R], *, repeatable: Callable[[], bool] = lambda: True
) -> R:
    """Run `function`; if its connection was lost and `repeatable()` still says the work is safe
    to repeat (nothing was committed), run it once more on a fresh connection."""
    try:
        return function()
    except DatabaseError as error:
        if not connection_lost(error) or default_connection.in_atomic_block or not repeatable():
            raise
        logger.info("database connection lost (%s); retrying once", type(error).__name__)
        _trouble.set()
        drop_connection()
        purge_dead_connections()
        return function()


# Set when a connection was found dead or none could be had; cleared by the next purge.
_trouble = threading.Event()
_purging = threading.Lock()


def purge_dead_connections() -> None:
    """After a connection fault, test every idle pooled connection at once (one short round
    trip each; the pool replaces the dead ones). Otherwise each of the next requests meets the
    dead ones one by one, and psycopg_pool's own check on getconn backs off for a second and
    more after the second dead connection in a row."""
    if not _trouble.is_set() or not _purging.acquire(blocking=False):
        return
    try:
        _trouble.clear()
        pool = getattr(default_connection, "pool", None)
        if pool is not None:
            pool.check()
    except Exception:
        logger.debug("checking the pooled connections failed", exc_info=True)
    finally:
        _purging.release()


def drop_connection() -> None:
    """Give the thread's connection back (a broken one is discarded by the pool), never raising:
    the work's own outcome is what the caller must see."""
    try:
        close_old_connections()
    except Exception:
        try:
            default_connection.close()  # resets the thread's connection even when it fails
        except Exception:
            logger.debug("closing a broken database connection failed", exc_info=True)


# A unit running longer than this waits rather than computes: it leaves the running gate.
# (Under load a quick unit's wall time reaches tens of milliseconds: at 50 ms too many left the
# gate early, and the bench's p95 rose by a third.)
SLOW_UNIT_SECONDS = 0.2


class DatabaseExecutor:
    """A fixed number of threads for database work, at most `running` of them running at once
    (a slow unit stops counting), and a bounded wait for both."""

    def __init__(self, threads: int, wait_seconds: float, running: int | None = None) -> None:
        self.threads = threads
        self.running = min(running or threads, threads)
        self.wait_seconds = wait_seconds
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="heyaira-db")
        # Semaphores per event loop (asyncio primitives belong to a loop).
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Gates] = (
            weakref.WeakKeyDictionary()
        )

    async def run(self, function: Callable[[], R]) -> R:
        loop = asyncio.get_running_loop()
        gates = self._gates.get(loop)
        if gates is None:
            gates = self._gates[loop] = _Gates(self.threads, self.running)
        deadline = loop.time() + self.wait_seconds
        await _enter(gates.threads, deadline, loop)
        try:
            await _enter(gates.running, deadline, loop)
        except BaseException:
            gates.threads.release()
            raise
        leave_running = _Once(gates.running.release)
        try:
            future = self._pool.submit(contextvars.copy_context().run, function)
        except BaseException:
            leave_running()
            gates.threads.release()
            raise
        slow = loop.call_later(SLOW_UNIT_SECONDS, leave_running)
        # Released when the thread is done, not when the caller stops waiting: a cancelled
        # request must not let more work in than there are threads.
        future.add_done_callback(
            lambda _: _call_from_thread(loop, _finished, slow, leave_running, gates.threads)
        )
        return await asyncio.wrap_future(future)


class _Gates:
    def __init__(self, threads: int, running: int) -> None:
        self.threads = asyncio.Semaphore(threads)
        self.running = asyncio.Semaphore(running)


class _Once:
    def __init__(self, function: Callable[[], object]) -> None:
        self._function: Callable[[], object] | None = function

    def __call__(self) -> None:
        function, self._function = self._function, None
        if function is not None:
            function()


async def _enter(gate: asyncio.Semaphore, deadline: float, loop: asyncio.AbstractEventLoop) -> None:
    if not gate.locked():
        await gate.acquire()  # free: no timer needed
        return
    try:
        await asyncio.wait_for(gate.acquire(), max(0.0, deadline - loop.time()))
    except TimeoutError:
        raise NoCapacity() from None


def _finished(slow: asyncio.TimerHandle, leave_running: _Once, threads: asyncio.Semaphore) -> None:
    slow.cancel()
    leave_running()
    threads.release()


def _call_from_thread(
    loop: asyncio.AbstractEventLoop, function: Callable[..., None], *args: object
) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(function, *args)


_executor: DatabaseExecutor | None = None


def executor() -> DatabaseExecutor:
    global _executor
    if _executor is None:
        _executor = DatabaseExecutor(
            threads=settings.DATABASE_POOL_SIZE or DEFAULT_THREADS,
            wait_seconds=settings.DATABASE_POOL_TIMEOUT_MS / 1000,
            running=settings.DATABASE_CONCURRENCY,
        )
    return _executor


async def database_answers(timeout_seconds: float) -> bool:
    """Readiness: the database runs a query for us within `timeout_seconds`."""
    try:
        return await asyncio.wait_for(executor().run(_select_one), timeout_seconds)
    except (TimeoutError, Unavailable):
        return False


def _select_one() -> bool:
    close_old_connections()
    try:
        with default_connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except DatabaseError:
        return False
    finally:
        drop_connection()
