"""Strict readers for settings that come from the environment.

A value that cannot be parsed stops the start with a message naming the variable: a typo in
production must never turn into a silent default.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from runtime import pool_checks

T = TypeVar("T")

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


class ConfigError(ImproperlyConfigured):
    """A setting from the environment is malformed or missing; `variable` names a missing one."""

    def __init__(self, message: str, *, variable: str = "") -> None:
        super().__init__(message)
        self.variable = variable


# How to give a value to the variables a production start cannot do without.
_RANDOM = "\"$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')\""
HOW_TO_SET = {
    "SECRET_KEY": f"export SECRET_KEY={_RANDOM}",
    "HEYAIRA_API_KEY_PEPPER": f"export HEYAIRA_API_KEY_PEPPER={_RANDOM} (not SECRET_KEY's value)",
}
# gunicorn's APP_LOAD_ERROR: its master stops at the first worker that exits with it, instead of
# starting new workers that fail the same way. Any non-zero status would do for manage.py.
EXIT_STATUS = 4


def startup_message(error: ConfigError) -> str:
    """The one line a start that cannot go on prints: what is wrong, naming the variable, and
    how to set it."""
    text = " ".join(str(error).split())
    if error.variable:
        how = HOW_TO_SET.get(error.variable, f"export {error.variable}=...")
        text += (
            f"; DEBUG is off, so set it in the environment ({how}), or start with "
            "DEBUG=true for local development (`make run` does)"
        )
    return f"HeyAira cannot start: {text}. The README's Configuration table lists every setting."


def exit_on_config_error(error: ConfigError) -> NoReturn:
    """Stop the process with the one-line message instead of a traceback."""
    print(startup_message(error), file=sys.stderr, flush=True)
    raise SystemExit(EXIT_STATUS)


def or_exit_on_config_error(start: Callable[[], T]) -> T:
    """`start()` (which loads the settings), or the one-line message and the exit status."""
    try:
        return start()
    except ConfigError as error:
        exit_on_config_error(error)


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name)
    if value is None or value == "":
        if default is None:
            raise ConfigError(f"{name} must be set", variable=name)
        return default
    return value


def apply_debug_defaults(values: Mapping[str, str], *, source: str) -> bool:
    """Use `values` (the quick start's file) for variables the environment leaves unset, but only
    when DEBUG ends up on: the environment's DEBUG wins, else the file's. Returns whether applied.

    Production (DEBUG off) therefore never starts on quick-start secrets, even beside a stale file.
    """
    if not values:
        return False
    if os.environ.get("DEBUG"):
        debug = env_bool("DEBUG", False)
    else:
        debug = _parse_bool(f"DEBUG in {source}", values.get("DEBUG", ""), False)
    if not debug:
        return False
    for name, value in values.items():
        if not os.environ.get(name):
            os.environ[name] = value
    return True


def env_bool(name: str, default: bool) -> bool:
    return _parse_bool(name, os.environ.get(name), default)


def _parse_bool(name: str, raw: str | None, default: bool) -> bool:
    if raw is None or raw == "":
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(
        f"{name}={raw!r} is not a boolean; use one of true/false, 1/0, yes/no, on/off"
    )


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name}={value} is below the minimum of {minimum}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name}={value} is above the maximum of {maximum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    items = [item.strip() for item in raw.split(",")]
    if any(item == "" for item in items):
        raise ConfigError(f"{name}={raw!r} has an empty item; separate values with single commas")
    return items


def public_url(name: str, default: str) -> str:
    """An absolute http(s) origin with an optional path prefix, without a trailing slash."""
    raw = env_str(name, default)
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{name}={raw!r} must be an absolute http:// or https:// URL")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ConfigError(f"{name}={raw!r} must not carry a query, fragment or user info")
    return raw.rstrip("/")


@dataclass(frozen=True)
class DatabaseLimits:
    """How long database work may wait, in milliseconds (0: no limit)."""

    pool_timeout_ms: int = 5000  # for a pooled connection
    statement_timeout_ms: int = 10000
    lock_timeout_ms: int = 3000


def database_from_url(
    url: str,
    *,
    base_dir: Path,
    pool_size: int = 0,
    limits: DatabaseLimits | None = None,
    pgbouncer: bool = False,
) -> dict[str, Any]:
    """Turn DATABASE_URL into a Django DATABASES entry (sqlite:/// or postgres://).

    pool_size > 0 gives PostgreSQL a connection pool of at most that many connections. On
    PostgreSQL the statement and lock timeouts are session settings sent when each connection
    opens, so pooled connections keep them and every request (MCP, REST, admin) has them.
    With `pgbouncer` (DATABASE_URL names PgBouncer in transaction mode) there are no session
    settings: the timeouts go with each statement as SET LOCAL (runtime.pgbouncer), and
    server-side cursors and prepared statements are off.
    """
    limits = limits or DatabaseLimits()
    parsed = _parse_database_url(url)
    if parsed["ENGINE"] == "django.db.backends.sqlite3":
        return _sqlite_database(url, parsed, base_dir)
    if not parsed["NAME"] or "/" in parsed["NAME"]:
        raise ConfigError(f"DATABASE_URL {_redact(url)!r} must name one database after the host")
    if not parsed["HOST"]:
        raise ConfigError(f"DATABASE_URL {_redact(url)!r} names no host")
    database = {**parsed, "PORT": str(parsed["PORT"]), "OPTIONS": parsed.get("OPTIONS", {})}
    if pgbouncer:
        _behind_pgbouncer(database, limits)
    else:
        database["OPTIONS"]["options"] = _session_options(limits, database["OPTIONS"])
        # Only the hot-path statements (core.statements.bound_cursor) bind on the server and so
        # can be prepared; Django's own cursors never prepare.
        database["OPTIONS"]["prepare_threshold"] = PREPARE_THRESHOLD
    _add_pool(database, pool_size, limits)
    return database


def _parse_database_url(url: str) -> dict[str, Any]:
    """dj-database-url's reading of the URL, for the two engines HeyAira runs on only."""
    try:
        parsed: dict[str, Any] = dict(dj_database_url.parse(url))
    except dj_database_url.UnknownSchemeError:
        parsed = {"ENGINE": ""}
    except ValueError:
        raise ConfigError(f"DATABASE_URL {_redact(url)!r} has an invalid port or quoting") from None
    if parsed["ENGINE"] not in ("django.db.backends.sqlite3", "django.db.backends.postgresql"):
        raise ConfigError(
            f"DATABASE_URL scheme {urlsplit(url).scheme!r} is not supported; use sqlite:///PATH "
            "or postgres://USER@HOST:PORT/NAME"
        )
    return parsed


def _behind_pgbouncer(database: dict[str, Any], limits: DatabaseLimits) -> None:
    """PgBouncer in transaction mode keeps no session: settings go with each transaction, and
    nothing may outlive one (server-side cursors, prepared statements)."""
    if "options" in database["OPTIONS"]:
        raise ConfigError(
            "DATABASE_URL: PgBouncer refuses the options parameter; with "
            "DATABASE_PGBOUNCER=true send settings per transaction instead"
        )
    database["ENGINE"] = "runtime.pgbouncer"
    database["TRANSACTION_LOCAL_SETTINGS"] = _transaction_local(limits)
    database["DISABLE_SERVER_SIDE_CURSORS"] = True
    database["OPTIONS"]["prepare_threshold"] = None


def _sqlite_database(url: str, parsed: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    if parsed["HOST"]:
        raise ConfigError(f"DATABASE_URL {url!r}: a SQLite URL has no host; use sqlite:///PATH")
    if not urlsplit(url).path.lstrip("/"):  # dj-database-url reads it as :memory:
        raise ConfigError(f"DATABASE_URL {url!r} names no SQLite file")
    name = parsed["NAME"]
    file = Path(name) if name.startswith("/") else base_dir / name
    file.parent.mkdir(parents=True, exist_ok=True)
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(file),
        "OPTIONS": {
            # IMMEDIATE takes the write lock at BEGIN, so concurrent writers wait on the busy
            # timeout instead of failing half-way through a transaction.
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }


# A statement run this many times on one connection is prepared there (psycopg's default).
PREPARE_THRESHOLD = 5


def _add_pool(database: dict[str, Any], pool_size: int, limits: DatabaseLimits) -> None:
    if pool_size > 0:
        database["OPTIONS"]["pool"] = {
            "min_size": 1,
            "max_size": pool_size,
            "timeout": limits.pool_timeout_ms / 1000,
            # When a connection came back: runtime.pool_checks skips the check for a while.
            "reset": pool_checks.note_given_back,
        }


def _transaction_local(limits: DatabaseLimits) -> str:
    """The SET LOCAL prefix of every statement behind PgBouncer (runtime.pgbouncer)."""
    return (
        f"SET LOCAL statement_timeout = {limits.statement_timeout_ms}; "
        f"SET LOCAL lock_timeout = {limits.lock_timeout_ms}; "
    )


def _session_options(limits: DatabaseLimits, options: dict[str, Any]) -> str:
    """libpq's `options`: ours first, so that an `options=` in DATABASE_URL can override them."""
    ours = (
        f"-c statement_timeout={limits.statement_timeout_ms} "
        f"-c lock_timeout={limits.lock_timeout_ms}"
    )
    given = str(options.get("options", "")).strip()
    return f"{ours} {given}" if given else ours


def database_limits(
    *, pool_timeout_ms: int, statement_timeout_ms: int, lock_timeout_ms: int
) -> DatabaseLimits:
    if statement_timeout_ms and lock_timeout_ms >= statement_timeout_ms:
        # PostgreSQL: a lock_timeout not below statement_timeout would never fire.
        raise ConfigError(
            f"DATABASE_LOCK_TIMEOUT_MS={lock_timeout_ms} must be below "
            f"DATABASE_STATEMENT_TIMEOUT_MS={statement_timeout_ms} (or 0 for no lock timeout)"
        )
    return DatabaseLimits(pool_timeout_ms, statement_timeout_ms, lock_timeout_ms)


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)


def cache_from_url(url: str) -> dict[str, Any]:
    """CACHE_URL: `locmem://` (one process) or `redis://HOST:PORT/DB` (shared by all workers)."""
    parts = urlsplit(url)
    if parts.scheme == "locmem":
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "heyaira"}
    if parts.scheme in ("redis", "rediss"):
        if not parts.hostname:
            raise ConfigError(f"CACHE_URL {_redact(url)!r} names no host")
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "heyaira",
        }
    raise ConfigError(
        f"CACHE_URL scheme {parts.scheme!r} is not supported; use locmem:// or redis://HOST:PORT/DB"
    )
