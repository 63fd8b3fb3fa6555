"""Each table the export reads in id order gets an index on (project, id), which replaces the
foreign key's own index on project alone (every lookup by project uses it as well).

The foreign keys' indexes are dropped by name, not by AlterField: on SQLite, AlterField rebuilds
the table, and the rebuild would drop continuity_memory's full-text triggers (0005)."""

import django.db.models.deletion
from django.db import migrations, models

# (model, table, the index Django made for the foreign key, the new index)
TABLES = (
    ("memory", "continuity_memory", "continuity_memory_project_id_7badfbcb", "memory_bundle_order"),
    ("task", "continuity_task", "continuity_task_project_id_a3fa1247", "task_bundle_order"),
    (
        "workreceipt",
        "continuity_workreceipt",
        "continuity_workreceipt_project_id_45c38248",
        "receipt_bundle_order",
    ),
    (
        "stateversion",
        "continuity_stateversion",
        "continuity_stateversion_project_id_f71fe065",
        "state_bundle_order",
    ),
)


def _project_without_index() -> models.ForeignKey:
    return models.ForeignKey(
        db_index=False,
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to="projects.project",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("continuity", "0008_superseded_decisions_go_with_their_project"),
        ("projects", "0007_project_audit_chain"),
    ]

    operations = [
        *(
            models_and_database
            for model, table, old, new in TABLES
            for models_and_database in (
                migrations.AddIndex(
                    model_name=model, index=models.Index(fields=["project", "id"], name=new)
                ),
                migrations.SeparateDatabaseAndState(
                    state_operations=[
                        migrations.AlterField(
                            model_name=model, name="project", field=_project_without_index()
                        )
                    ],
                    database_operations=[
                        migrations.RunSQL(
                            f"DROP INDEX {old}",
                            reverse_sql=f"CREATE INDEX {old} ON {table} (project_id)",
                        )
                    ],
                ),
            )
        )
    ]
