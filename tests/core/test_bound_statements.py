"""The hot-path statements (core.statements) bind their values on the server on PostgreSQL and
stay prepared on their connection after a few runs; Django's own queries never prepare; and
through PgBouncer (no prepared statements there) the hot path goes as Django's queries do."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from core.statements import bound_cursor
from identity import authn
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from tests.factories import World

# Prepared statements are PostgreSQL's; CI runs these through PgBouncer too.
pytestmark = pytest.mark.postgres


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def _through_pgbouncer() -> bool:
    return not connection.settings_dict["OPTIONS"].get("prepare_threshold")


def test_authentication_stays_prepared_on_its_connection_after_a_few_requests(
    world: World,
) -> None:
    issued = api_key_create(
        operator_caller(world.alpha),
        user_id=world.contributor.pk,
        label="prepared",
        scopes=["continuity:read"],
    )
    for turn in range(6):
        caller = authn.authenticate(f"Bearer {issued.secret}", resource="mcp", request_id=str(turn))
        assert caller.project.pk == world.alpha.pk
    key_lookups = [text for text in _prepared() if "projects_apikey" in text]
    if _through_pgbouncer():
        assert key_lookups == []
    else:
        # One statement, its values as parameters ($1...), not quoted into the text.
        assert len(key_lookups) == 1, key_lookups
        assert "$1" in key_lookups[0]
        assert issued.secret[:12] not in key_lookups[0]


def test_django_queries_are_never_prepared(db: None) -> None:
    for turn in range(8):
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::int + 40", [turn])
    assert not [text for text in _prepared() if "+ 40" in text]


def test_the_hot_path_cursor_binds_on_the_server_unless_through_pgbouncer(db: None) -> None:
    with bound_cursor(connection) as cursor:
        client_side = isinstance(cursor.cursor, psycopg.ClientCursor)
        cursor.execute("SELECT %s::text || %s", ["a", "b"])
        assert cursor.fetchone() == ("ab",)
    assert client_side == _through_pgbouncer()
