from typing import Any

from django.apps import AppConfig
from django.core.signals import request_finished, request_started
from django.db.backends.signals import connection_created


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Rows that waited for the database (audit.recorder) are written after any Django
        # request as well as after MCP work.
        request_started.connect(_unit_started, dispatch_uid="audit_unit_started")
        request_finished.connect(_flush_pending_audit, dispatch_uid="audit_flush_pending")
        # SQLite's chain trigger calls the chain hash as a function of each connection.
        connection_created.connect(_register_functions, dispatch_uid="audit_sqlite_functions")


def _register_functions(connection: Any, **kwargs: Any) -> None:
    from audit.triggers import register_sqlite_function

    register_sqlite_function(connection)


def _unit_started(**kwargs: Any) -> None:
    from audit.recorder import unit_started

    unit_started()


def _flush_pending_audit(**kwargs: Any) -> None:
    from audit.recorder import flush_pending, pending_count
    from core.database import drop_connection

    if pending_count():
        flush_pending()
        drop_connection()  # Django already closed the request's connection; close ours too
