"""One project's audit events, filtered and paged by keyset, newest first, and the audited
reads of the audit pages (`audit_browse`, `audit_event_view`, `audit_export`): operations for a
Caller that holds READ_AUDIT (projects.audit_log.audit_reader).

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
from pydantic import Field

from audit.chain import live_chain
from audit.filters import AuditEventFilter, filtered
from audit.models import AuditEvent
from audit.recorder import AuditNote
from audit.state import ChainState, EventProof, chain_state, event_proof, project_ids
from continuity.inputs import NoInput
from continuity.selectors.cursors import decode_cursor as decode_list_cursor
from core.access import Caller, Capability
from core.errors import NotFound, ValidationError
from core.operations import operation
from core.validation import Input
from projects.models import Project

PAGE_SIZE = 50
# "and N more" counts the events after a page up to this many (then says "more than"): a count
# over half a million filtered rows is not worth its time on every page.
MORE_COUNTED = 10_000


def filtered_events(project: Project, filters: AuditEventFilter) -> QuerySet[AuditEvent]:
    """Exactly the filtered set, newest first: the list pages through it and the exports
    stream it."""
    return filtered(AuditEvent.objects.filter(project_id__in=project_ids(project)), filters)


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
    return AuditEvent.objects.filter(project_id__in=project_ids(project), pk=event_id).first()


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


# --- the audit pages' operations ------------------------------------------------------------


class AuditQueryInput(Input):
    """The filters as the address gave them (audit.filters declares and checks them) and, for
    the list, the position to page on from."""

    filters: dict[str, str] = Field(default_factory=dict)
    after: str | None = None


class AuditEventInput(Input):
    event_id: uuid.UUID


@dataclass(frozen=True)
class AuditEventView:
    event: AuditEvent
    proof: EventProof
    chain: ChainState


@dataclass(frozen=True)
class AuditExport:
    events: QuerySet[AuditEvent]  # not yet read: streamed after the export's own row
    filtered: bool  # False: the whole chain


def checked_filters(caller: Caller, args: AuditQueryInput, note: AuditNote) -> AuditEventFilter:
    """The filters, each wrong value a field of the ValidationError (a damaged page position
    too, as `after`)."""
    note.target("project", caller.project.pk)
    filters = AuditEventFilter(args.filters or None)
    problems = {name: str(errors[0]) for name, errors in filters.form.errors.items()}
    if args.after is not None and decode_cursor(args.after) is None:
        problems["after"] = "is not a position in this list"
    if problems:
        raise ValidationError(fields=problems)
    return filters


@operation("audit_chain", capability=Capability.READ_AUDIT, input_model=NoInput, writes=False)
def audit_chain(caller: Caller, args: NoInput, note: AuditNote) -> ChainState:
    """The chain's state (audit.state): the list shows it even when its filters are refused,
    as it was before the refusal's own row."""
    note.target("project", caller.project.pk)
    return chain_state(live_chain(caller.project))


@operation(
    "audit_browse", capability=Capability.READ_AUDIT, input_model=AuditQueryInput, writes=False
)
def audit_browse(caller: Caller, args: AuditQueryInput, note: AuditNote) -> AuditPage:
    """A page of the filtered log."""
    filters = checked_filters(caller, args, note)
    cursor = decode_cursor(args.after) if args.after is not None else None
    return audit_page(caller.project, filters, cursor=cursor)


@operation(
    "audit_event_view", capability=Capability.READ_AUDIT, input_model=AuditEventInput, writes=False
)
def audit_event_view(caller: Caller, args: AuditEventInput, note: AuditNote) -> AuditEventView:
    """One event with its place in the chain, and the chain's state."""
    note.target("audit_event", args.event_id)
    event = audit_event(caller.project, args.event_id)
    if event is None:
        raise NotFound()
    return AuditEventView(event, event_proof(event), chain_state(event.chain))


@operation(
    "audit_export", capability=Capability.READ_AUDIT, input_model=AuditQueryInput, writes=False
)
def audit_export(caller: Caller, args: AuditQueryInput, note: AuditNote) -> AuditExport:
    """Exactly the list's filtered set, to stream. Its row is written when this returns, before
    a line is read, so an export holds its own row when the filters select it."""
    filters = checked_filters(caller, args, note)
    return AuditExport(filtered_events(caller.project, filters), filters.form.active())
