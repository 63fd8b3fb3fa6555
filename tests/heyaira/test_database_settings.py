"""Statement and lock timeouts come from the environment, parsed strictly, and reach every
PostgreSQL session as session settings, so pooled connections keep them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import close_old_connections, connection

from heyaira.envconfig import ConfigError, DatabaseLimits, database_from_url, database_limits
from runtime.orm import run_orm

ROOT = Path(__file__).resolve().parent.parent.parent


def test_it_sends_the_timeouts_as_session_settings(tmp_path: Path) -> None:
    pg = database_from_url("postgres://u@h/db", base_dir=tmp_path)
    assert pg["OPTIONS"]["options"] == "-c statement_timeout=10000 -c lock_timeout=3000"
    limits = DatabaseLimits(pool_timeout_ms=700, statement_timeout_ms=8000, lock_timeout_ms=500)
    pooled = database_from_url("postgres://u@h/db", base_dir=tmp_path, pool_size=4, limits=limits)
    assert pooled["OPTIONS"]["options"] == "-c statement_timeout=8000 -c lock_timeout=500"
    assert pooled["OPTIONS"]["pool"]["timeout"] == 0.7


def test_options_in_the_url_come_after_ours_so_they_win(tmp_path: Path) -> None:
    pg = database_from_url("postgres://u@h/db?options=-c%20work_mem%3D64MB", base_dir=tmp_path)
    assert pg["OPTIONS"]["options"].endswith(" -c work_mem=64MB")
    assert pg["OPTIONS"]["options"].startswith("-c statement_timeout=10000")


def test_sqlite_gets_no_postgres_options(tmp_path: Path) -> None:
    assert "options" not in database_from_url("sqlite:///x", base_dir=tmp_path)["OPTIONS"]


def test_it_refuses_a_lock_timeout_that_could_never_fire() -> None:
    with pytest.raises(ConfigError, match="DATABASE_LOCK_TIMEOUT_MS=10000 must be below"):
        database_limits(pool_timeout_ms=1, statement_timeout_ms=10000, lock_timeout_ms=10000)
    # No statement timeout, or no lock timeout (then the statement timeout bounds lock waits).
    assert database_limits(pool_timeout_ms=1, statement_timeout_ms=0, lock_timeout_ms=5000)
    assert database_limits(pool_timeout_ms=1, statement_timeout_ms=9000, lock_timeout_ms=0)


def _check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**base, "DEBUG": "true", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DATABASE_STATEMENT_TIMEOUT_MS", "10s", "is not an integer"),
        ("DATABASE_LOCK_TIMEOUT_MS", "-1", "below the minimum"),
        ("DATABASE_POOL_TIMEOUT_MS", "0", "below the minimum"),
    ],
)
def test_a_malformed_timeout_stops_the_start(name: str, value: str, message: str) -> None:
    result = _check({name: value})
    assert result.returncode != 0
    assert f"{name}" in result.stderr
    assert message in result.stderr


def _session_timeouts() -> tuple[str, str]:
    close_old_connections()
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')"
            )
            row = cursor.fetchone()
            assert row is not None
            return str(row[0]), str(row[1])
    finally:
        close_old_connections()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_pooled_connections_keep_the_timeouts_in_every_thread() -> None:
    async def from_the_executor() -> list[tuple[str, str]]:
        units = [run_orm(_session_timeouts) for _ in range(12)]
        return list(await asyncio.gather(*units))

    seen = asyncio.run(from_the_executor()) + asyncio.run(from_the_executor())
    # Django's own thread (REST, admin) draws from the same pool.
    seen += [_session_timeouts() for _ in range(3)]
    assert set(seen) == {("10s", "3s")}
