from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from tests.factories import World
from tests.live import asgi_server  # noqa: F401  (the live-server fixture)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate-limit counters live in the cache: every test starts with none."""
    cache.clear()
    yield
    cache.clear()


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def owner_browser(world: World) -> Client:
    return signed_in(world.owner)


@pytest.fixture
def api(db: None) -> Client:
    """A client for machine endpoints: no cookies, CSRF checks as in production."""
    return Client(enforce_csrf_checks=True)
