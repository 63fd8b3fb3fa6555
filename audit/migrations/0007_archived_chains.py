# The chain trigger takes an archived chain's events as they come, linked already, into a chain
# without a head, and audit_chain_adopt makes its head (project_import, audit.triggers). Rows
# written as before are linked exactly as before, so going back needs nothing undone.

from typing import Any

from django.db import migrations

from audit import triggers


def install(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(triggers.CHAIN_APPEND)
            cursor.execute(triggers.CHAIN_ADOPT)


class Migration(migrations.Migration):
    dependencies = [("audit", "0006_counted_events")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop, elidable=False)]
