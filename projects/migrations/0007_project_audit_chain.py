# A project's live audit chain, when it is not the one named by its id: an imported project
# keeps its bundle's chains, archived, and writes to a new one (audit.chain.live_chain); a
# project a bundle went into over REST names the project whose chains it holds archived.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0006_project_lease_seconds"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="audit_archive",
            field=models.CharField(
                blank=True, db_default="", default="", editable=False, max_length=36
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="audit_chain",
            field=models.CharField(
                blank=True, db_default="", default="", editable=False, max_length=40
            ),
        ),
    ]
