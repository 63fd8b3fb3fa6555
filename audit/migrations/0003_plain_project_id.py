# The audit app depends on no other app: AuditEvent.project (a foreign key without a database
# constraint) becomes the plain column it already was in the database. The column, its values,
# its own index and the two composite ones stay as they are; only Django's view of the model
# changes, so no SQL runs.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0002_audit_target_id_128'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name='auditevent', name='audit_project_time'),
                migrations.RemoveIndex(model_name='auditevent', name='audit_project_operation'),
                migrations.RemoveField(model_name='auditevent', name='project'),
                migrations.AddField(
                    model_name='auditevent',
                    name='project_id',
                    field=models.UUIDField(blank=True, db_index=True, null=True),
                ),
                migrations.AddIndex(
                    model_name='auditevent',
                    index=models.Index(fields=['project_id', '-occurred_at'], name='audit_project_time'),
                ),
                migrations.AddIndex(
                    model_name='auditevent',
                    index=models.Index(fields=['project_id', 'operation'], name='audit_project_operation'),
                ),
            ],
            database_operations=[],
        ),
    ]
