"""Indexes for the audit list's target and actor filters, each leading with the project and
ending with the time, so that a filtered page is the first rows of one index range.

On PostgreSQL they are built with CREATE INDEX CONCURRENTLY (the migration is not atomic): the
audit table keeps taking appends while they build. If a build is interrupted, PostgreSQL keeps
an INVALID index of that name: drop it (DROP INDEX CONCURRENTLY <name>) and migrate again.
"""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class AddIndexConcurrentlyOnPostgres(AddIndexConcurrently):
    """CREATE INDEX CONCURRENTLY on PostgreSQL; a plain CREATE INDEX elsewhere (SQLite)."""

    def database_forwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)
        else:
            migrations.AddIndex.database_forwards(self, app_label, schema_editor, *args)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)
        else:
            migrations.AddIndex.database_backwards(self, app_label, schema_editor, *args)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("audit", "0007_archived_chains"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgres(
            model_name="auditevent",
            index=models.Index(
                fields=["project_id", "target_id", "-occurred_at"], name="audit_project_target"
            ),
        ),
        AddIndexConcurrentlyOnPostgres(
            model_name="auditevent",
            index=models.Index(
                fields=["project_id", "actor_label", "-occurred_at"],
                name="audit_project_actor_label",
            ),
        ),
        AddIndexConcurrentlyOnPostgres(
            model_name="auditevent",
            index=models.Index(
                fields=["project_id", "actor_id", "-occurred_at"], name="audit_project_actor_id"
            ),
        ),
    ]
