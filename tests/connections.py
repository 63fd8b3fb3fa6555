"""Database connections of the test process on PostgreSQL, kept instead of opened per request.

The test process runs without a pool (tests/environment.py), so with CONN_MAX_AGE=0 each request
the test client or an in-process ASGI call makes, and each database thread's job, opens a new
PostgreSQL session: about 2,700 of them for the in-process MCP, REST and OAuth tests alone. Kept
connections make that about 120. Live servers are other processes and keep their own settings.

A kept connection can outlive the test that opened it, in a thread that is gone, idle or idle in
a transaction (holding its locks). After each test that touched the database, the other sessions
of this worker's test database that are idle are ended, so no test inherits another's sessions;
a thread that still holds its wrapper reconnects through CONN_HEALTH_CHECKS."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection
from pytest_django import DjangoDbBlocker

KEPT_SECONDS = 600


def _keeps_connections() -> bool:
    """Direct PostgreSQL only: PgBouncer's pass keeps the settings it tests (docs/scaling.md)."""
    return connection.vendor == "postgresql" and not settings.DATABASE_PGBOUNCER


@pytest.fixture(scope="session", autouse=True)
def kept_test_connections() -> Iterator[bool]:
    """Every connection opened from here on (each thread's wrapper reads this dict) is kept."""
    if not _keeps_connections():
        yield False
        return
    database = connection.settings_dict
    before = database["CONN_MAX_AGE"]
    database["CONN_MAX_AGE"] = KEPT_SECONDS
    yield True
    database["CONN_MAX_AGE"] = before


@pytest.fixture(autouse=True)
def no_leftover_sessions(
    kept_test_connections: bool, django_db_blocker: DjangoDbBlocker
) -> Iterator[None]:
    yield
    if not kept_test_connections or connection.connection is None:
        return  # this test did not reach the database from this thread
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)')"
        )
