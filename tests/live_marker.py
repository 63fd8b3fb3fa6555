"""The `live` marker: tests that start a server, a browser or a subprocess. `make check` leaves
them out (`-m "not live"`); `make test` runs them all.

No test has to remember the marker:
- any test whose fixtures (at any depth) include `live_processes` is marked. Every fixture that
  starts something (`asgi_server`, `chromium`, `mcp_world`, a module's own server...) asks for
  `live_processes`, which does nothing else;
- tests marked `live_server` or `conformance` are marked too;
- a test that is not marked and still starts a subprocess (`subprocess.Popen`: subprocess.run,
  asyncio, Playwright's driver all go through it) or listens on a socket (any server, in a
  thread or not) fails, naming what it started and how to mark it. That guard holds from the
  test's first fixture to its last teardown, so a module- or session-scoped fixture it causes
  to start is caught too.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

LIVE = "live"
# Markers that already say a test starts a live server.
LIVE_MARKERS = ("live_server", "conformance")


class StartedWithoutLiveMarker(RuntimeError):
    """A test not marked `live` started a subprocess or a server."""


_unmarked_item: pytest.Item | None = None  # the running test, when it is not marked `live`
_violations: pytest.StashKey[list[str]] = pytest.StashKey()


@pytest.fixture(scope="session")
def live_processes() -> None:
    """Asked for by every fixture (or test) that starts a server, a browser or a subprocess:
    the tests that use it, directly or through other fixtures, are marked `live`."""


def pytest_configure(config: pytest.Config) -> None:
    _install_guards()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_live(item):
            item.add_marker(LIVE)


def is_live(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(name) for name in (LIVE, *LIVE_MARKERS)):
        return True
    return "live_processes" in getattr(item, "fixturenames", ())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[Any]:
    global _unmarked_item
    _unmarked_item = None if item.get_closest_marker(LIVE) else item
    try:
        return (yield)
    finally:
        _unmarked_item = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    # A refusal the code under test caught and swallowed still fails the test.
    result = yield
    violations = item.stash.get(_violations, [])
    if violations:
        raise StartedWithoutLiveMarker(_message(violations[0]))
    return result


def _refuse(what: str) -> None:
    item = _unmarked_item
    if item is None:
        return
    item.stash.setdefault(_violations, []).append(what)
    raise StartedWithoutLiveMarker(_message(what))


def _message(what: str) -> str:
    return (
        f"this test is not marked `live` but {what}: ask for the `live_processes` fixture in "
        "the fixture that starts it (or in the test), or mark the test `pytest.mark.live`"
    )


def _install_guards() -> None:
    if getattr(subprocess.Popen.__init__, "_live_guard", False):
        return
    popen_init = subprocess.Popen.__init__
    listen = socket.socket.listen

    def guarded_popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        program = args if isinstance(args, str) else next(iter(args), "")
        _refuse(f"starts the subprocess {str(program)!r}")
        popen_init(self, args, *rest, **kw)

    def guarded_listen(self: socket.socket, *args: Any) -> None:
        _refuse(f"listens on {self.getsockname()!r}")
        listen(self, *args)

    guarded_popen_init._live_guard = True  # type: ignore[attr-defined]
    subprocess.Popen.__init__ = guarded_popen_init  # type: ignore[method-assign]
    socket.socket.listen = guarded_listen  # type: ignore[method-assign, assignment]
