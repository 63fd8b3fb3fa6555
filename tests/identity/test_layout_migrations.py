"""The move of the OAuth app to identity/ and of AuditEvent.project to a plain column keeps every
existing database: the app label stays `oauth`, and the audit migration runs no SQL and keeps
every row's project."""

from __future__ import annotations

import uuid

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("audit", "0002_audit_target_id_128")]
AFTER = [("audit", "0003_plain_project_id")]


@pytest.mark.django_db
def test_it_keeps_the_oauth_app_label_and_its_migrations():
    config = apps.get_app_config("oauth")
    assert config.name == "identity"
    assert apps.get_model("oauth", "AccessToken")._meta.db_table == "oauth_accesstoken"
    executor = MigrationExecutor(connection)
    assert ("oauth", "0001_initial") in executor.loader.disk_migrations


@pytest.mark.django_db(transaction=True)
def test_it_runs_no_sql_to_make_the_audit_project_a_plain_column():
    executor = MigrationExecutor(connection)
    migration = executor.loader.graph.nodes[AFTER[0]]
    with connection.schema_editor(collect_sql=True, atomic=False) as editor:
        migration.apply(executor.loader.project_state(BEFORE), editor)
    assert [line for line in editor.collected_sql if not line.startswith("--")] == []


@pytest.mark.django_db(transaction=True)
def test_it_keeps_each_audit_rows_project_through_the_migration():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old_state = executor.loader.project_state(BEFORE)
    Project = old_state.apps.get_model("projects", "Project")
    OldEvent = old_state.apps.get_model("audit", "AuditEvent")
    project = Project.objects.create(id=uuid.uuid4(), slug="before-the-move", name="Before")
    OldEvent.objects.create(actor_type="operator", operation="project_create", project=project)

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)

    AuditEvent = executor.loader.project_state(AFTER).apps.get_model("audit", "AuditEvent")
    rows = AuditEvent.objects.filter(project_id=project.pk)
    assert [row.operation for row in rows] == ["project_create"]

    # On to the latest migration (the hash chain): the row is still there, now chained.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    latest = apps.get_model("audit", "AuditEvent")
    assert [(row.operation, row.seq) for row in latest.objects.filter(project_id=project.pk)] == [
        ("project_create", 1)
    ]
