"""Migration operations that only apply on PostgreSQL (the quick start runs on SQLite)."""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.migrations.operations.base import Operation


class _OnPostgresOnly(Operation):
    """Runs the operation it is mixed into on PostgreSQL alone."""

    def database_forwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)


class PostgresOnlyAddIndex(_OnPostgresOnly, migrations.AddIndex):
    """AddIndex for PostgreSQL-only index types (GIN full-text); a no-op on other databases.

    The model state still records the index, so makemigrations stays quiet everywhere.
    """


class PostgresOnlyRemoveIndex(_OnPostgresOnly, migrations.RemoveIndex):
    """RemoveIndex of an index made by PostgresOnlyAddIndex; a no-op on other databases."""
