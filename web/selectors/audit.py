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

from audit.models import AuditEvent
from continuity.selectors.cursors import decode_cursor as decode_list_cursor
from core.errors import ValidationError
from projects.models import Project

PAGE_SIZE = 50
# "and N more" counts the events after a page up to this many (then says "more than"): a count
# over half a million filtered rows is not worth its time on every page.
MORE_COUNTED = 10_000


@dataclass(frozen=True)
class AuditFilters:
    since: datetime | None = None
    until: datetime | None = None
    actor: str = ""  # an actor's label (a username, an API key's label) or id
    operation: str = ""
    outcome: str = ""
    error_code: str = ""
    target: str = ""  # "type:id", or an id alone
    request_id: str = ""


def filtered_events(project: Project, filters: AuditFilters) -> QuerySet[AuditEvent]:
    """Exactly the filtered set, newest first: the list pages through it and the exports
    stream it."""
    events = AuditEvent.objects.filter(project_id=project.pk)
    if filters.since is not None:
        events = events.filter(occurred_at__gte=filters.since)
    if filters.until is not None:
        events = events.filter(occurred_at__lt=filters.until)
    if filters.actor:
        events = events.filter(Q(actor_label=filters.actor) | Q(actor_id=filters.actor))
    exact = {
        "operation": filters.operation,
        "outcome": filters.outcome,
        "error_code": filters.error_code,
        "request_id": filters.request_id,
    }
    events = events.filter(**{name: value for name, value in exact.items() if value})
    if filters.target:
        kind, colon, target_id = filters.target.partition(":")
        if colon and kind and target_id:
            events = events.filter(target_type=kind, target_id=target_id)
        else:
            events = events.filter(target_id=filters.target)
    return events.order_by("-occurred_at", "-id")


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    next_cursor: str | None
    more: int = 0  # events after this page, counted up to MORE_COUNTED + 1


def audit_page(
    project: Project, filters: AuditFilters, *, cursor: tuple[datetime, uuid.UUID] | None
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
