"""The gunicorn worker for production: uvicorn, with a listening socket of its own per worker.

With gunicorn's one shared listener, every worker waits in accept() on the same socket and
whichever wakes first takes the connection. Keep-alive clients connect once, so the first
worker to wake often kept all of them while the others idled (one worker carried the whole load
in 7 of 12 bench runs). Here each worker binds its own socket to the configured address with
SO_REUSEPORT, and the kernel spreads new connections over the workers' sockets by a hash of
the connection's addresses; the shared socket is shut down (for every process that holds it),
so no connection can wait on a socket that nobody accepts from.

Run it as `gunicorn heyaira.asgi:application -k heyaira.workers.ReusePortUvicornWorker
--reuse-port ...` (docs/operating.md). With `--reuse-port` a worker binds before it shuts the
shared socket, so the address is never unbound; without it, the first worker shuts the shared
socket first (a moment at start-up in which new connections are refused). A worker's accept
queue dies with it: connections that had arrived but were not accepted yet are reset, and
clients retry. Linux only (SO_REUSEPORT balancing); Unix-socket binds are served as gunicorn
serves them.
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import Any

from uvicorn_worker import UvicornWorker

logger = logging.getLogger(__name__)


class ReusePortUvicornWorker(UvicornWorker):
    # HEYAIRA_TRUSTED_PROXIES alone decides whose X-Forwarded-For counts (heyaira/proxies.py):
    # uvicorn's own proxy-header trust stays off with this worker even without gunicorn.conf.py.
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "proxy_headers": False}

    def init_process(self) -> None:
        shared: list[Any] = getattr(self, "sockets")  # noqa: B009 (gunicorn's, untyped)
        self.sockets = [own_listener(each, self.cfg.backlog) for each in shared]
        super().init_process()


def own_listener(shared: Any, backlog: int) -> Any:
    """A socket of this worker's own on `shared`'s TCP address, or `shared` itself when that
    cannot be done (a Unix socket, or no SO_REUSEPORT)."""
    if shared.family not in (socket.AF_INET, socket.AF_INET6) or not hasattr(
        socket, "SO_REUSEPORT"
    ):
        return shared
    address = shared.getsockname()
    own = socket.socket(shared.family, socket.SOCK_STREAM)
    own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        own.bind(address)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        # The shared socket listens without SO_REUSEPORT: stop it first, then take the address.
        _stop_listening(shared)
        own.bind(address)
    else:
        _stop_listening(shared)
    own.listen(backlog)
    own.setblocking(False)
    return own


def _stop_listening(shared: Any) -> None:
    """Shut the shared listener down: it leaves the port's SO_REUSEPORT group in every process
    (the master and the other workers hold the same socket), so the kernel hashes no new
    connection to it. Already shut down by another worker: nothing to do."""
    try:
        shared.shutdown(socket.SHUT_RDWR)
    except OSError as error:
        if error.errno != errno.ENOTCONN:
            raise
        logger.debug("the shared listener was already shut down")
