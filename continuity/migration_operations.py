"""Migration operations that only apply on PostgreSQL (the quick start runs on SQLite)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


class PostgresOnlyAddIndex(migrations.AddIndex):
    """AddIndex for PostgreSQL-only index types (GIN full-text); a no-op on other databases.

    The model state still records the index, so makemigrations stays quiet everywhere.
    """

    def database_forwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)


class PostgresOnlyRemoveIndex(migrations.RemoveIndex):
    """RemoveIndex of an index made by PostgresOnlyAddIndex; a no-op on other databases."""

    def database_forwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)
