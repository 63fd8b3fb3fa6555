"""One project's audit events, filtered and paged by keyset, newest first.

The filters are all equalities or a time range on the project's rows, and the page is the next
PAGE_SIZE rows after a (occurred_at, id) position: the index on (project_id, -occurred_at)
serves it without an OFFSET, so the 1,000th page costs what the first does.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from audit.filters import AuditEventFilter, filtered
from audit.models import AuditEvent
from continuity.selectors.cursors import decode_cursor as decode_list_cursor
from core.errors import ValidationError
from projects.models import Project

PAGE_SIZE = 50
# "and N more" counts the events after a page up to this many (then says "more than"): a count
# over half a million filtered rows is not worth its time on every page.
MORE_COUNTED = 10_000


def filtered_events(project: Project, filters: AuditEventFilter) -> QuerySet[AuditEvent]:
    """Exactly the filtered set, newest first: the list pages through it and the exports
    stream it."""
    return filtered(AuditEvent.objects.filter(project_id=project.pk), filters)


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    next_cursor: str | None
    more: int = 0  # events after this page, counted up to MORE_COUNTED + 1


def audit_page(
    project: Project, filters: AuditEventFilter, *, cursor: tuple[datetime, uuid.UUID] | None
) -> AuditPage:
    """One page and the cursor of the next (None on the last page), in one query."""
    events = filtered_events(project, filters)
    if cursor is not None:
        events = _after(events, cursor)
    found = list(events[: PAGE_SIZE + 1])
    if len(found) <= PAGE_SIZE:
        return AuditPage(found, None)
    found = found[:PAGE_SIZE]
    last = (found[-1].occurred_at, found[-1].pk)
    more = _after(events, last)[: MORE_COUNTED + 1].count()
    return AuditPage(found, encode_cursor(found[-1]), more)


def _after(
    events: QuerySet[AuditEvent], position: tuple[datetime, uuid.UUID]
) -> QuerySet[AuditEvent]:
    moment, event_id = position
    # The plain range first, so that it is the index condition: written as one OR, the
    # planner walks the index from the newest event and filters its way down (0.4 s at
    # 500,000 events deep, against 0.1 ms).
    return events.filter(occurred_at__lte=moment).filter(
        Q(occurred_at__lt=moment) | Q(id__lt=event_id)
    )


def audit_event(project: Project, event_id: uuid.UUID) -> AuditEvent | None:
    return AuditEvent.objects.filter(project_id=project.pk, pk=event_id).first()


def encode_cursor(event: AuditEvent) -> str:
    # continuity.selectors.cursors' format, on occurred_at
    raw = f"{event.occurred_at.isoformat()}|{event.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID] | None:
    """The position a cursor names (the same format as continuity's lists), or None when it is
    not one of ours."""
    try:
        return decode_list_cursor(cursor, "the audit list")
    except ValidationError:
        return None
