"""The pool's check before handing out a connection (runtime.pool_checks): no round trip for
one given back a moment ago, the full check for one that sat idle, and a dead one is found."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import psycopg
import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from core.framework_internals import pool_check
from runtime import pool_checks
from tests.live import direct_port, maintenance_connection

pytestmark = pytest.mark.postgres


@pytest.fixture
def pooled(db: None) -> Iterator[psycopg.Connection]:
    conn = maintenance_connection()
    try:
        yield conn
    finally:
        conn.close()


def _end_backend(conn: psycopg.Connection) -> None:
    pid = conn.info.backend_pid
    with maintenance_connection() as other:
        other.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])


def test_a_connection_given_back_a_moment_ago_is_handed_out_without_a_round_trip(pooled):
    pool_checks.note_given_back(pooled)
    _end_backend(pooled)
    # No query went out, so the check cannot know the backend is gone: that is the point.
    pool_checks.check_unless_fresh(pooled)
    # Its first statement finds out (core.database then retries on a fresh connection).
    with pytest.raises(psycopg.OperationalError):
        pooled.execute("SELECT 1")


def test_a_connection_that_sat_idle_is_checked_and_a_dead_one_refused(pooled, monkeypatch):
    pool_checks.note_given_back(pooled)
    monkeypatch.setattr(pool_checks, "FRESH_SECONDS", 0.0)
    pool_checks.check_unless_fresh(pooled)  # alive: the full check passes
    _end_backend(pooled)
    with pytest.raises(psycopg.OperationalError):
        pool_checks.check_unless_fresh(pooled)


def test_a_connection_new_to_the_pool_gets_the_full_check(pooled):
    _end_backend(pooled)  # never given back: no time on record
    with pytest.raises(psycopg.OperationalError):
        pool_checks.check_unless_fresh(pooled)


def test_a_closed_connection_is_refused_even_when_fresh(pooled):
    pool_checks.note_given_back(pooled)
    pooled.close()
    with pytest.raises(psycopg.OperationalError):
        pool_checks.check_unless_fresh(pooled)


def test_the_served_application_gives_a_pool_made_as_django_makes_it_this_check(db):
    settings = connection.settings_dict
    # Django's own construction (django.db.backends.postgresql.base, CONN_HEALTH_CHECKS on).
    pool = ConnectionPool(
        kwargs={
            "host": settings["HOST"] or None,
            "port": direct_port() or None,
            "user": settings["USER"] or None,
            "dbname": "postgres",
            "autocommit": True,
        },
        open=False,
        check=ConnectionPool.check_connection,
        reset=pool_checks.note_given_back,
        min_size=1,
        max_size=1,
    )
    pool.open(wait=True)
    try:
        pool_checks.use_fresh_check(sender=None, connection=SimpleNamespace(pool=pool))
        assert pool_check(pool) is pool_checks.check_unless_fresh
        with pool.connection() as first:
            pid = first.info.backend_pid
        # Given back a moment ago: handed out again without a round trip, its backend intact.
        with pool.connection() as again:
            assert again.info.backend_pid == pid
            assert again.execute("SELECT 1").fetchone() == (1,)
    finally:
        pool.close()
