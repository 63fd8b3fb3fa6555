"""The pool's check of a connection before handing it out, without a round trip for one that
was in use a moment ago.

psycopg_pool's own check (`ConnectionPool.check_connection`, what Django installs with
CONN_HEALTH_CHECKS) sends an empty query on every getconn: one more round trip for every
request, about a third of the REST throughput of `task_update`. Django passes the pool no check
of our choosing, so the served application (heyaira.asgi) calls `connect()`: once Django has
made its pool, its `check` callback becomes `check_unless_fresh` (through
core.framework_internals: Django 5.2 passes the pool a check of its own;
tests/core/test_pool_checks.py shows the swap happens).

A connection given back to the pool within FRESH_SECONDS is handed out after a local check
only (not closed, not broken); one that sat idle longer, or is new to the pool, gets the full
check, which finds those that died while idle (a restart, a failover, an idle timeout). A
connection that dies in that short moment fails its first statement: core.database retries
the work once on a fresh connection and then tests every idle one (purge_dead_connections), as
after any other connection fault.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import psycopg
from django.db.backends.signals import connection_created
from psycopg_pool import ConnectionPool

from core.framework_internals import pool_check, set_pool_check

FRESH_SECONDS = 2.0

_given_back: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


def check_unless_fresh(connection: Any) -> None:
    """The pool's `check`: raise for a connection that cannot be used."""
    given_back = _given_back.get(connection)
    if given_back is not None and time.monotonic() - given_back < FRESH_SECONDS:
        if connection.closed or connection.broken:
            raise psycopg.OperationalError("the pooled connection is closed")
        return
    ConnectionPool.check_connection(connection)


def note_given_back(connection: Any) -> None:
    """The pool's `reset`: called when a connection comes back, idle."""
    _given_back[connection] = time.monotonic()


def connect() -> None:
    """Give each pool the check above as soon as Django has made it."""
    connection_created.connect(use_fresh_check, dispatch_uid="runtime.pool_checks")


def use_fresh_check(sender: Any, connection: Any, **kwargs: Any) -> None:
    pool = getattr(connection, "pool", None)
    if pool is not None and pool_check(pool) is not check_unless_fresh:
        set_pool_check(pool, check_unless_fresh)
