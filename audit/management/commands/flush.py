"""Django's `flush` (empty every table), with the audit triggers lifted for its transaction.

Emptying the whole database is the one deliberate way audit rows go (test runs flush between
transactional tests). Lifting a trigger needs the table's owner (ALTER TABLE), so an
application role that owns nothing cannot flush: see docs/operating.md. The triggers are back
when the transaction ends, committed or not (DDL is transactional on PostgreSQL and SQLite).
"""

from __future__ import annotations

from typing import Any

from django.core.management.commands import flush
from django.db import connections, transaction

from audit import triggers


class Command(flush.Command):
    def handle(self, **options: Any) -> None:
        connection = connections[options["database"]]
        with transaction.atomic(using=connection.alias):
            triggers.uninstall(connection)
            super().handle(**options)
            triggers.install(connection)
