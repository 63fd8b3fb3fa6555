from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.continuity.mcp.harness import McpWorld, build_world
from tests.live import start_live_server, stop_live_server


@pytest.fixture(scope="module")
def mcp_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpWorld]:
    """One real server per test module (starting one costs seconds), with its people and keys."""
    server, pg_name = start_live_server(tmp_path_factory.mktemp("mcp"))
    try:
        yield build_world(server)
    finally:
        stop_live_server(server, pg_name)
