"""Django's PostgreSQL backend, with the database timeouts sent as transaction-local settings.

Behind PgBouncer in transaction mode a client's session is not a server session: each
transaction may run on another server connection, and PgBouncer (1.18, Debian's) refuses the
`options` startup parameter that carries the timeouts directly to PostgreSQL. So every
statement goes out as `SET LOCAL statement_timeout = ...; SET LOCAL lock_timeout = ...;
<statement>` in the same simple-protocol message: no extra round trip, and whatever server
connection runs it, the limits hold for that statement's transaction (an autocommit statement
is a transaction of its own) and end with it, leaking into no other client's work.

What else transaction mode needs is set in heyaira.envconfig: no server-side cursors (a named
cursor lives across transactions), no prepared statements (PgBouncer 1.18 cannot route them),
no session settings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.db.backends.postgresql import base

# The settings key (beside ENGINE, NAME, ...) with the SET LOCAL prefix, made by envconfig.
PREFIX_KEY = "TRANSACTION_LOCAL_SETTINGS"
# The statements that read or write rows get the limits. Others (CREATE DATABASE, VACUUM, DDL
# in migrations, SAVEPOINT) go as they are: some cannot run inside a transaction block, which a
# multi-statement message is.
LIMITED = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", re.IGNORECASE)


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, settings_dict: dict[str, Any], alias: str = "default") -> None:
        super().__init__(settings_dict, alias)
        prefix = settings_dict.get(PREFIX_KEY, "")
        if prefix:
            self.execute_wrappers.append(TransactionLocal(prefix))


class TransactionLocal:
    """An execute wrapper that prefixes each statement with the SET LOCAL settings."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        if not isinstance(sql, str) or not LIMITED.match(sql):
            return execute(sql, params, many, context)
        if many:
            # executemany sends its statement once per row: set the limits once, before it, in
            # the transaction the rows will run in (Django runs executemany in one).
            context["cursor"].cursor.execute(self.prefix.rstrip("; "))
            return execute(sql, params, many, context)
        result = execute(self.prefix + sql, params, many, context)
        cursor = context["cursor"].cursor
        while cursor.nextset():  # past the SET results, to the statement's own
            pass
        return result
