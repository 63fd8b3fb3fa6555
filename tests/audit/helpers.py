"""Shared by the audit tests: events written through the recorder, tampering as the owner."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

from audit import triggers
from audit.models import Outcome
from audit.recorder import SecurityContext, record_security_event
from core.access import ActorType


class Named:
    """A project as the recorder sees it: an id."""

    def __init__(self, pk: Any) -> None:
        self.pk = pk


def security_event(operation: str = "sign_in", *, project: Any = None, n: int = 0) -> None:
    context = SecurityContext(
        actor_type=ActorType.ANONYMOUS, request_id=f"req-{n}", instance="test"
    )
    record_security_event(
        operation,
        Outcome.REJECTED,
        context,
        project=Named(project) if project is not None else None,
        error_code="invalid_credentials",
    )


@contextmanager
def triggers_lifted() -> Iterator[None]:
    """What a database owner can do (a superuser on PostgreSQL, anyone holding the SQLite
    file): take the triggers off, tamper, put them back. The chain must tell."""
    with transaction.atomic():
        triggers.uninstall(connection)
        yield
        triggers.install(connection)


def sql(statement: str, params: list[Any] | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params or [])
