"""The gunicorn worker for production: uvicorn, taking new connections least-loaded first.

With gunicorn's one shared listener, whichever worker wakes first accepts every connection that
is waiting, so keep-alive clients that connect together often all land on one worker (one worker
carried the whole load in 7 of 12 bench runs). A listener per worker with SO_REUSEPORT spreads
connections by a hash of their addresses instead, which is random: 32 bench clients split 19/13,
12/20 and 9/23 over two workers, and the p95 latency follows the fuller worker.

This worker keeps the one shared listener but accepts by itself: each worker publishes how many
connections it holds in a table shared by all workers (runtime.worker_loads), every worker is
woken when a connection arrives, and the one holding the fewest accepts it at once. A busier
worker waits 20 ms first and then accepts only if nobody else did, so a stalled
worker never keeps a connection from being served. 32 clients split 16/16.

Run it as `gunicorn heyaira.asgi:application -k runtime.workers.BalancedUvicornWorker ...`
(docs/operating.md). uvicorn's own proxy-header trust stays off with it (heyaira/proxies.py).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import sys
from collections.abc import Callable
from typing import Any

from gunicorn.arbiter import Arbiter
from uvicorn import Config, Server
from uvicorn_worker import UvicornWorker

from runtime import heap
from runtime.worker_loads import LoadSlot, WorkerLoads

logger = logging.getLogger(__name__)

# How long a worker that is not the least loaded leaves a new connection to the others: long
# enough for an idle worker to be scheduled on a busy host, short beside a connection's life.
DEFER_SECONDS = 0.02
# After the process runs out of file descriptors (or memory for sockets): pause accepting.
ACCEPT_ERROR_PAUSE_SECONDS = 0.5
_TRANSIENT_ACCEPT_ERRORS = {errno.ECONNABORTED, errno.EPROTO, errno.EPERM}


class BalancedUvicornWorker(UvicornWorker):
    # HEYAIRA_TRUSTED_PROXIES alone decides whose X-Forwarded-For counts (heyaira/proxies.py):
    # uvicorn's own proxy-header trust stays off with this worker even without gunicorn.conf.py.
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "proxy_headers": False}

    # Made in the master by the first worker object, before any fork: every worker shares it.
    loads: WorkerLoads | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if BalancedUvicornWorker.loads is None:
            BalancedUvicornWorker.loads = WorkerLoads()

    async def _serve(self) -> None:
        assert self.loads is not None
        self.config.app = self.wsgi
        heap.settle()  # the app is loaded: keep it out of later collections (runtime.heap)
        server = BalancedServer(self.config, self.loads.claim())
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)


class CountedConnections(set[Any]):
    """uvicorn's set of open connections, telling `changed` whenever one opens or closes."""

    def __init__(self, changed: Callable[[], None]) -> None:
        super().__init__()
        self._changed = changed

    def add(self, connection: Any) -> None:
        super().add(connection)
        self._changed()

    def discard(self, connection: Any) -> None:
        super().discard(connection)
        self._changed()


class BalancedServer(Server):
    """uvicorn's server, accepting from the given listeners itself rather than through the event
    loop's server (which would accept every waiting connection at once)."""

    def __init__(self, config: Config, slot: LoadSlot) -> None:
        super().__init__(config)
        self.slot = slot
        self.server_state.connections = CountedConnections(self._publish)
        self._connecting = 0
        self._acceptors: list[asyncio.Task[None]] = []
        self._handshakes: set[asyncio.Task[None]] = set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # the lifespan, and no listener of the loop's own
        if self.should_exit or not self.started:
            return
        for listener in sockets or []:
            self._acceptors.append(asyncio.create_task(self._accept_forever(listener)))

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for acceptor in self._acceptors:
            acceptor.cancel()
        await asyncio.gather(*self._acceptors, return_exceptions=True)
        self.slot.release()
        await super().shutdown(sockets=sockets)

    def _publish(self) -> None:
        self.slot.publish(len(self.server_state.connections) + self._connecting)

    def _protocol(self) -> asyncio.Protocol:
        return self.config.http_protocol_class(  # type: ignore[call-arg]
            config=self.config,
            server_state=self.server_state,
            app_state=self.lifespan.state,
        )

    async def _accept_forever(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        listener.setblocking(False)
        while True:
            await _readable(loop, listener)
            if not self.slot.least_loaded():
                await asyncio.sleep(DEFER_SECONDS)  # a less busy worker takes it first
            try:
                connection, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                continue  # another worker took it
            except OSError as error:
                if error.errno in _TRANSIENT_ACCEPT_ERRORS:
                    continue
                logger.error("accepting a connection failed: %s; pausing", error)
                await asyncio.sleep(ACCEPT_ERROR_PAUSE_SECONDS)
                continue
            connection.setblocking(False)
            if self.config.ssl is None:
                await self._connect(loop, connection)
            else:  # a TLS handshake must not hold up the next accept
                handshake = asyncio.create_task(self._connect(loop, connection))
                self._handshakes.add(handshake)
                handshake.add_done_callback(self._handshakes.discard)

    async def _connect(self, loop: asyncio.AbstractEventLoop, connection: socket.socket) -> None:
        self._connecting += 1
        self._publish()
        try:
            await loop.connect_accepted_socket(self._protocol, connection, ssl=self.config.ssl)
        except (OSError, ConnectionError) as error:
            logger.debug("a new connection failed before it was served: %s", error)
            connection.close()
        finally:
            self._connecting -= 1
            self._publish()


def _readable(loop: asyncio.AbstractEventLoop, listener: socket.socket) -> asyncio.Future[None]:
    """A future done when `listener` has a connection waiting (or had one: another worker may
    take it first)."""
    ready: asyncio.Future[None] = loop.create_future()
    descriptor = listener.fileno()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(descriptor, wake)
    ready.add_done_callback(lambda _: loop.remove_reader(descriptor))
    return ready
