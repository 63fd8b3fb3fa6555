from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractUser
from django.core.cache import cache
from django.test import Client

from tests.factories import World


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate-limit counters live in the cache: every test starts with none."""
    cache.clear()
    yield
    cache.clear()


def signed_in(user: AbstractUser) -> Client:
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
