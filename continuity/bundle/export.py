"""A project's bundle as a stream of lines (bytes), read in one snapshot of the database.

The lines are the same for the same data, whoever asks and from where: the header's time is
the time of the newest audit event in the bundle, not the time of the export.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Sum

from audit.models import AuditChainHead
from audit.state import project_chains
from continuity.bundle.format import FORMAT, VERSION, Writer, encode_time
from continuity.bundle.records import AUDIT_EVENT, TYPES, audit_event_bodies
from projects.models import Project

LINES_PER_CHUNK = 500


def bundle_lines(project: Project) -> Iterator[bytes]:
    """The bundle, line by line, in constant memory. Reads run in one transaction (REPEATABLE
    READ on PostgreSQL) so that the counts, the records and the audit chain agree."""
    # Inside someone else's transaction (a test's) its snapshot is the one there is.
    own = not connection.in_atomic_block
    with transaction.atomic():
        if own and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                # Read each table in its (project, id) index's order, rows streaming from the
                # first: the planner's other choice, a sort of every row, spills a million wide
                # rows to disk before the first comes out (seconds with nothing to send).
                cursor.execute("SET LOCAL enable_sort = off")
        writer = Writer()
        yield writer.header(_header(project))
        for kind in TYPES:
            for body in kind.bodies(project):
                yield writer.sealed(body)
        for body in audit_event_bodies(project):
            yield writer.sealed(body)
        yield writer.trailer()


def _header(project: Project) -> dict[str, Any]:
    heads = AuditChainHead.objects.filter(chain__in=project_chains(project))
    head = heads.aggregate(events=Sum("seq"), newest=Max("last_time"))
    counts = {kind.name: kind.queryset(project).count() for kind in TYPES}
    counts[AUDIT_EVENT] = head["events"] or 0
    return {
        "format": FORMAT,
        "version": VERSION,
        "instance": settings.HEYAIRA_INSTANCE,
        "project": {"id": str(project.pk), "slug": project.slug, "name": project.name},
        "as_of": encode_time(head["newest"] or project.updated_at),
        "counts": counts,
    }


def _take(lines: Iterator[bytes]) -> bytes:
    return b"".join(line for _, line in zip(range(LINES_PER_CHUNK), lines, strict=False))


async def streamed(lines: Iterator[bytes]) -> AsyncIterator[bytes]:
    """A response body for the ASGI server: the lines read a chunk at a time in the request's
    own thread, so their transaction and cursor stay on one connection, and each chunk is sent
    as it comes (Django reads a sync iterator whole into memory under ASGI)."""
    try:
        while chunk := await sync_to_async(_take, thread_sensitive=True)(lines):
            yield chunk
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()
