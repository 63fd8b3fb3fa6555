"""A TCP proxy the test controls, in front of a live server: it forwards bytes both ways until a
request carrying a trigger (a tool name) has gone through, and then, when the server's answer
comes back, does not relay it. Either it kills the client process first (a crash after sending,
before reading) or it just drops the connection (a lost answer). The server has done the work
by then: its answer exists, the client never sees it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class CuttingProxy:
    upstream_port: int
    listener: socket.socket
    trigger: bytes = b""  # cut the answer to the first request containing this; b"" = never
    victim_pid: int | None = None  # killed (SIGKILL) before the answer is dropped
    cuts: int = 0
    requests: list[bytes] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        return int(self.listener.getsockname()[1])

    def arm(self, trigger: bytes, victim_pid: int | None = None) -> None:
        with self._lock:
            self.trigger, self.victim_pid = trigger, victim_pid

    def _serve(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(downstream,), daemon=True).start()

    def _connection(self, downstream: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        cut = threading.Event()  # this connection's current request carries the trigger
        threading.Thread(
            target=self._requests, args=(downstream, upstream, cut), daemon=True
        ).start()
        try:
            while data := upstream.recv(65536):
                if cut.is_set() and self._cut():
                    break
                downstream.sendall(data)
        except OSError:
            pass
        finally:
            for end in (downstream, upstream):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()

    def _requests(
        self, downstream: socket.socket, upstream: socket.socket, cut: threading.Event
    ) -> None:
        try:
            while data := downstream.recv(65536):
                self.requests.append(data)
                with self._lock:
                    if self.trigger and self.trigger in data:
                        cut.set()
                upstream.sendall(data)
        except OSError:
            pass

    def _cut(self) -> bool:
        """Called when the answer to a trigger request arrives: kill and/or drop, once."""
        with self._lock:
            if not self.trigger:
                return False
            self.trigger = b""
            self.cuts += 1
            victim, self.victim_pid = self.victim_pid, None
        if victim is not None:
            os.kill(victim, signal.SIGKILL)
        return True


@contextlib.contextmanager
def cutting_proxy(listener: socket.socket, upstream_port: int) -> Iterator[CuttingProxy]:
    proxy = CuttingProxy(upstream_port=upstream_port, listener=listener)
    thread = threading.Thread(target=proxy._serve, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        listener.close()


def listening_socket() -> socket.socket:
    """Bound first, so the server can be told the proxy's URL as its public one."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener
