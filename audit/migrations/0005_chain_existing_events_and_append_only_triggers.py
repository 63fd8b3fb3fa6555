# Existing events are chained in the order they were written (time, then id), each project's
# apart and the project-less ones in the security chain; then the triggers take over: every new
# row is linked at INSERT and no row can be updated or deleted (audit.triggers).

from typing import Any

from django.db import migrations

from audit import chain, triggers

BATCH = 2000


def chain_existing_events(apps: Any, schema_editor: Any) -> None:
    Event = apps.get_model("audit", "AuditEvent")
    Head = apps.get_model("audit", "AuditChainHead")
    heads: dict[str, Any] = {}  # chain -> its head as it grows
    rows = Event.objects.filter(seq__isnull=True).order_by("occurred_at", "id")
    for event in rows.iterator(chunk_size=BATCH):
        name = chain.chain_of(event.project_id)
        fields = {field: getattr(event, field) for field in chain.FIELDS if field != "chain"}
        digest = chain.digest({**fields, "chain": name})
        head = heads.get(name) or Head(chain=name, seq=0, prev_hash="", last_hash="")
        link = chain.chain_hash(head.last_hash, head.seq + 1, digest)
        Event.objects.filter(pk=event.pk).update(
            chain=name, digest=digest, seq=head.seq + 1, prev_hash=head.last_hash, hash=link
        )
        head.seq, head.prev_hash, head.last_hash = head.seq + 1, head.last_hash, link
        head.last_time = event.occurred_at
        heads[name] = head
    Head.objects.bulk_create(heads.values())


def install_triggers(apps: Any, schema_editor: Any) -> None:
    triggers.install(schema_editor.connection)


def uninstall_triggers(apps: Any, schema_editor: Any) -> None:
    triggers.uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0004_hash_chain_and_noise_counts"),
    ]

    operations = [
        migrations.RunPython(chain_existing_events, migrations.RunPython.noop),
        migrations.RunPython(install_triggers, uninstall_triggers),
    ]
