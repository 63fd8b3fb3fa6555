"""A client that sends a huge chunked body, and a watch on the server's temporary files.

`flood` writes a chunked body of up to `total` bytes as fast as the socket takes it, reading
whatever the server answers meanwhile, and stops when the server closes the connection (or after
`give_up` seconds). It reports how many bytes the socket accepted: when the server stops reading,
that is what the kernel's buffers hold (a few MB), not the body.

`TempWatch` samples, while a flood runs, the size of every file the server's processes hold
open under its TMPDIR (Python's temporary files are unlinked at once, so a directory listing
alone would not see them), and of the directory itself.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

CHUNK = b"x" * 65536
FRAME = b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n"
ONE_GB = 1 << 30


@dataclass
class Flood:
    status: int | None  # the answer's status, None if none came
    accepted: int  # body bytes the socket took
    seconds: float  # until the server answered and closed (or give_up)
    answer: bytes


def flood(port: int, path: str, *, total: int = ONE_GB, give_up: float = 30.0) -> Flood:
    sock = socket.create_connection(("127.0.0.1", port))
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    sock.sendall(head.encode())
    sock.setblocking(False)
    accepted, answer, start = 0, b"", time.monotonic()
    closed = False
    try:
        while not closed and accepted < total and time.monotonic() - start < give_up:
            readable, writable, _ = select.select([sock], [sock], [], 1)
            if readable:  # read first: a reset may follow the answer
                try:
                    data = sock.recv(65536)
                except ConnectionError:
                    break
                closed = not data
                answer += data
            if writable and not closed:
                try:
                    accepted += sock.send(FRAME)
                except BlockingIOError:
                    pass
                except (BrokenPipeError, ConnectionResetError):
                    break
        seconds = time.monotonic() - start
        answer += _rest_of(sock)
    finally:
        sock.close()
    return Flood(_status(answer), max(0, accepted), seconds, answer)


def _rest_of(sock: socket.socket) -> bytes:
    data = b""
    try:
        while True:
            readable, _, _ = select.select([sock], [], [], 0.2)
            if not readable:
                return data
            more = sock.recv(65536)
            if not more:
                return data
            data += more
    except ConnectionError:
        return data


def _status(answer: bytes) -> int | None:
    if not answer.startswith(b"HTTP/1.1 "):
        return None
    return int(answer[9:12])


@dataclass
class TempWatch:
    """The most the server held under `directory` at once, sampled every few milliseconds."""

    root_pid: int
    directory: Path
    most: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> TempWatch:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.most = max(self.most, self.held())
            time.sleep(0.005)
        self.most = max(self.most, self.held())

    def held(self) -> int:
        """Bytes in files the server's processes hold open there, or that the directory lists."""
        prefix = str(self.directory)
        total = 0
        for pid in _tree(self.root_pid):
            try:
                descriptors = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in descriptors:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(prefix):
                        total += os.stat(f"/proc/{pid}/fd/{fd}").st_size
                except OSError:
                    continue
        listed = sum(p.stat().st_size for p in self.directory.rglob("*") if p.is_file())
        return total + listed


def _tree(root: int) -> list[int]:
    """The process and its descendants (gunicorn's workers), from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree
