"""Fixtures for the core tests."""

from tests.live import asgi_server  # noqa: F401  (the live-server fixture)
