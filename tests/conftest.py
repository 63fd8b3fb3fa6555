from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection

from tests.factories import FAST_PASSWORD_HASHERS


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    """In-process tests hash passwords with a fast hasher; live servers keep the real one."""
    settings.PASSWORD_HASHERS = list(FAST_PASSWORD_HASHERS)


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    """Rate-limit counters live in the cache; no test inherits another's."""
    from django.core.cache import cache

    cache.clear()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked postgres need real concurrency: skip them on SQLite."""
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL=postgres://...)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Two tests with one node id cannot be told apart in a report, and xdist's loadfile and
    loadgroup modes would run one of them and silently drop the other (pytest 9.2 gave all of
    Schemathesis's eagerly loaded operations one id). Refuse such a collection."""
    counts = Counter(item.nodeid for item in session.items)
    repeated = sorted(nodeid for nodeid, count in counts.items() if count > 1)
    if repeated:
        raise pytest.UsageError(f"{len(repeated)} node ids name more than one test: {repeated[:3]}")


# The `live` marker and its guard (tests/live_marker.py); headless Chromium (tests/browser.py):
# `chromium`, `browser_context` and `page`; the real ASGI server (tests/live.py): `asgi_server`;
# `world`, shared per module where it is safe (tests/world.py); kept PostgreSQL connections
# (tests/connections.py).
pytest_plugins = [
    "pytester",
    "tests.live_marker",
    "tests.browser",
    "tests.live",
    "tests.world",
    "tests.connections",
]
