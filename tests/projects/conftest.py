from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import LiveServer, start_live_server, stop_live_server


@pytest.fixture(scope="session")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the live servers' admin CSS and scripts are collected, once per test process."""
    return tmp_path_factory.mktemp("static")


@pytest.fixture
def admin_server(
    tmp_path: Path, static_root: Path, monkeypatch: pytest.MonkeyPatch, live_processes: None
) -> Iterator[LiveServer]:
    """The real ASGI application with the admin's static files, as `make run` serves it: page
    layout (the audit list's width, screenshots) depends on the admin's stylesheets."""
    monkeypatch.setenv("STATIC_ROOT", str(static_root))
    server, pg_name = start_live_server(tmp_path)
    try:
        if not any(static_root.iterdir()):
            server.manage("collectstatic", "--noinput", "--verbosity", "0")
        yield server
    finally:
        stop_live_server(server, pg_name)
