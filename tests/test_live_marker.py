"""The `live` marker (tests/live_marker.py) on a small suite of its own, run in this process: a
test is marked through any fixture that asks for `live_processes`, and an unmarked test that
starts a subprocess or listens on a socket fails, naming what it started."""

from __future__ import annotations

import pytest

# The marker's plugin alone: pytest-django would set up a second test environment here.
PLUGINS = ("-p", "tests.live_marker", "-p", "no:django")

SUITE = """
import socket
import subprocess

import pytest


@pytest.fixture
def server(live_processes):
    return "started"


@pytest.fixture
def through_another(server):
    return server


def test_uses_the_server(through_another):
    pass


def test_starts_nothing():
    pass


@pytest.mark.live
def test_marked_by_hand():
    pass


def test_forgets_the_marker_and_spawns():
    subprocess.run(["true"], check=True)


def test_forgets_the_marker_and_swallows_the_refusal():
    try:
        subprocess.run(["true"], check=True)
    except Exception:
        pass


def test_forgets_the_marker_and_listens():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
"""


def test_it_marks_through_fixtures_and_refuses_what_an_unmarked_test_starts(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    items, _ = pytester.inline_genitems(*PLUGINS)
    live = {item.name for item in items if item.get_closest_marker("live")}
    assert live == {"test_uses_the_server", "test_marked_by_hand"}

    run = pytester.inline_run(*PLUGINS, "-m", "not live")
    passed, _, failed = run.listoutcomes()
    assert [report.head_line for report in passed] == ["test_starts_nothing"]
    assert sorted(str(report.head_line) for report in failed) == [
        "test_forgets_the_marker_and_listens",
        "test_forgets_the_marker_and_spawns",
        "test_forgets_the_marker_and_swallows_the_refusal",
    ]
    for report in failed:
        assert "is not marked `live` but " in str(report.longrepr)
