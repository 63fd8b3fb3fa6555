"""Settings from the environment are parsed strictly: a malformed value stops the start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from heyaira.envconfig import ConfigError, database_from_url, env_bool, env_int, env_list
from runtime import pool_checks

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("raw", ["true", "TRUE", "1", "yes", "on"])
def test_it_reads_true_words(monkeypatch: pytest.MonkeyPatch, raw: str):
    monkeypatch.setenv("X_FLAG", raw)
    assert env_bool("X_FLAG", False) is True


@pytest.mark.parametrize("raw", ["false", "0", "no", "off"])
def test_it_reads_false_words(monkeypatch: pytest.MonkeyPatch, raw: str):
    monkeypatch.setenv("X_FLAG", raw)
    assert env_bool("X_FLAG", True) is False


@pytest.mark.parametrize("raw", ["ture", "2", "enabled", "y e s"])
def test_it_refuses_a_malformed_boolean(monkeypatch: pytest.MonkeyPatch, raw: str):
    monkeypatch.setenv("X_FLAG", raw)
    with pytest.raises(ConfigError, match="X_FLAG"):
        env_bool("X_FLAG", False)


def test_it_refuses_a_malformed_integer_or_one_below_its_minimum(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("X_N", "twelve")
    with pytest.raises(ConfigError, match="not an integer"):
        env_int("X_N", 1)
    monkeypatch.setenv("X_N", "3")
    with pytest.raises(ConfigError, match="minimum"):
        env_int("X_N", 30, minimum=24)


def test_it_refuses_an_empty_list_item(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("X_HOSTS", "a.example,,b.example")
    with pytest.raises(ConfigError, match="empty item"):
        env_list("X_HOSTS", [])


def test_it_reads_sqlite_and_postgres_urls(tmp_path: Path):
    sqlite = database_from_url("sqlite:///var/x.sqlite3", base_dir=tmp_path)
    assert sqlite["NAME"] == str(tmp_path / "var/x.sqlite3")
    pg = database_from_url("postgres://u:p%40ss@db.example:6543/heyaira", base_dir=tmp_path)
    assert (pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"], pg["NAME"]) == (
        "u",
        "p@ss",
        "db.example",
        "6543",
        "heyaira",
    )


@pytest.mark.parametrize(
    "url",
    [
        "mysql://u@h/db",
        "postgres://u@h:notaport/db",
        "postgres://u@h/",
        "postgres:///db",
        "sqlite://host/file.db",
        "sqlite:///",
        "not a url",
    ],
)
def test_it_refuses_a_malformed_database_url(url: str, tmp_path: Path):
    with pytest.raises(ConfigError):
        database_from_url(url, base_dir=tmp_path)


def test_it_never_prints_the_database_password():
    with pytest.raises(ConfigError) as raised:
        database_from_url("postgres://u:hunter2@h:bad/db", base_dir=ROOT)
    assert "hunter2" not in str(raised.value)


def _start(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DEBUG", "SECRET_KEY"))}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_malformed_debug_flag_stops_the_start():
    result = _start({"DEBUG": "maybe", "SECRET_KEY": "x" * 50})
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_production_refuses_to_start_without_a_secret_key():
    result = _start({"DEBUG": "false"})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_it_gives_postgres_a_connection_pool_when_asked(tmp_path: Path):
    pooled = database_from_url("postgres://u@h/db", base_dir=tmp_path, pool_size=7)
    plain = database_from_url("postgres://u@h/db", base_dir=tmp_path)
    assert pooled["OPTIONS"]["pool"] == {
        "min_size": 1,
        "max_size": 7,
        "timeout": 5.0,
        "reset": pool_checks.note_given_back,
    }
    assert "pool" not in plain["OPTIONS"]
    assert "pool" not in database_from_url("sqlite:///x", base_dir=tmp_path, pool_size=7)["OPTIONS"]


def test_a_pool_and_persistent_connections_together_stop_the_start():
    result = _start(
        {
            "DEBUG": "true",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres",
            "DATABASE_POOL_SIZE": "5",
            "DATABASE_CONN_MAX_AGE": "60",
        }
    )
    assert result.returncode != 0
    assert "DATABASE_CONN_MAX_AGE needs DATABASE_POOL_SIZE=0" in result.stderr


def test_it_reads_cache_urls():
    from heyaira.envconfig import cache_from_url

    assert cache_from_url("locmem://")["BACKEND"].endswith("LocMemCache")
    redis = cache_from_url("redis://127.0.0.1:6379/2")
    assert redis["BACKEND"].endswith("RedisCache")
    assert redis["LOCATION"] == "redis://127.0.0.1:6379/2"
    for bad in ("memcached://h", "redis://", "nonsense"):
        with pytest.raises(ConfigError):
            cache_from_url(bad)
