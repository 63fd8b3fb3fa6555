"""Which driver errors count as a lost connection (core.database): the answer is `unavailable`
and the work is retried once on a fresh connection, never an internal error."""

from __future__ import annotations

import psycopg
from django.db.utils import IntegrityError, InternalError

from core.database import connection_lost, unavailable_from, unreachable


def _wrapped(django_error: type[Exception], driver_error: psycopg.Error) -> Exception:
    error = django_error(*driver_error.args)
    error.__cause__ = driver_error
    return error


def test_it_takes_a_protocol_desync_behind_pgbouncer_for_a_lost_connection() -> None:
    # What psycopg raised when PgBouncer lost a server connection under a multi-statement query.
    error = _wrapped(
        InternalError, psycopg.InternalError("received 2 results from command 'BEGIN'")
    )
    assert connection_lost(error)
    assert unreachable(error)
    assert unavailable_from(error) is not None


def test_it_leaves_a_servers_internal_error_and_a_constraint_alone() -> None:
    server_side = psycopg.errors.InternalError_("cache lookup failed")  # SQLSTATE XX000
    assert server_side.sqlstate == "XX000"
    error = _wrapped(InternalError, server_side)
    assert not connection_lost(error)
    assert unavailable_from(error) is None
    violation = _wrapped(IntegrityError, psycopg.errors.UniqueViolation("duplicate key"))
    assert unavailable_from(violation) is None
