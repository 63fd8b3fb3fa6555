"""What members read on the dashboard besides its tasks (web.selectors.tasks): decisions and
notes with what superseded what, and the agents' running summaries with their versions.

Each read is an audited, bounded operation on the Caller's project, like continuity's own
selectors (task_get, receipt_list, memory_get and memory_search serve the other pages as they
are). Pages are keyset pages: their number of queries does not grow with the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Generic, Literal, TypeVar

from django.db.models import Count, F, Max, OuterRef, Subquery
from django.db.models.functions import Substr
from pydantic import Field, StrictInt

from audit.recorder import AuditNote
from continuity.inputs import AgentName, Cursor
from continuity.models import Memory, StateVersion
from continuity.selectors.cursors import page
from core.access import Caller, Capability
from core.operations import operation
from core.validation import Input
from web.selectors.paging import rows_after

# Only this much of a memory's content is read for the list; its page shows all of it.
PREVIEW_CHARS = 600
AGENTS_SHOWN = 50


class MemoryTimelineInput(Input):
    kind: Literal["decision", "note"] | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=100)] = 25
    cursor: Cursor | None = None


class SummaryAgentsInput(Input):
    limit: Annotated[StrictInt, Field(ge=1, le=AGENTS_SHOWN)] = AGENTS_SHOWN


class SummaryVersionsInput(Input):
    agent: AgentName
    limit: Annotated[StrictInt, Field(ge=1, le=50)] = 10
    before_version: Annotated[StrictInt, Field(ge=1)] | None = None


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    rows: Sequence[T]
    next_cursor: str | None
    more: int = 0  # rows after this page


@operation(
    "memory_timeline", capability=Capability.READ, input_model=MemoryTimelineInput, writes=False
)
def memory_timeline(caller: Caller, args: MemoryTimelineInput, note: AuditNote) -> Page[Memory]:
    """Decisions and notes newest first; each says which memory it superseded and which one
    superseded it (annotated: `head`, `supersedes_title`, `superseded_by_id`)."""
    note.target("project", caller.project.pk)
    successor = Memory.objects.filter(project=caller.project, supersedes=OuterRef("pk"))
    memories = Memory.objects.filter(project=caller.project)
    if args.kind:
        memories = memories.filter(kind=args.kind)
    memories = memories.annotate(
        head=Substr("content", 1, PREVIEW_CHARS),
        supersedes_title=F("supersedes__title"),
        superseded_by_id=Subquery(successor.values("pk")[:1]),
        superseded_by_title=Subquery(successor.values("title")[:1]),
    ).defer("content", "rationale")
    found, next_cursor = page(
        memories, cursor=args.cursor, limit=args.limit, listing="memory_timeline"
    )
    more = rows_after(memories, found[-1]).count() if next_cursor else 0
    return Page(found, next_cursor, more)


@dataclass(frozen=True)
class AgentSummary:
    agent: str
    newest_version: int
    versions: int
    updated_at: datetime


@dataclass(frozen=True)
class Agents:
    agents: list[AgentSummary]
    more: int  # agents past the first AGENTS_SHOWN


@operation(
    "summary_agents", capability=Capability.READ, input_model=SummaryAgentsInput, writes=False
)
def summary_agents(caller: Caller, args: SummaryAgentsInput, note: AuditNote) -> Agents:
    """Agents with a running summary here, by name (the first AGENTS_SHOWN): each one's
    newest version and how many; and how many more agents there are."""
    note.target("project", caller.project.pk)
    rows = (
        StateVersion.objects.filter(project=caller.project)
        .values("agent")
        .annotate(newest=Max("version"), count=Count("id"), updated=Max("created_at"))
        .order_by("agent")[: args.limit + 1]
    )
    agents = [AgentSummary(r["agent"], r["newest"], r["count"], r["updated"]) for r in rows]
    if len(agents) <= args.limit:
        return Agents(agents, 0)
    total = StateVersion.objects.filter(project=caller.project).values("agent").distinct()
    return Agents(agents[: args.limit], total.count() - args.limit)


@dataclass(frozen=True)
class Versions:
    versions: list[StateVersion]
    next_before: int | None
    more: int


@operation(
    "summary_versions", capability=Capability.READ, input_model=SummaryVersionsInput, writes=False
)
def summary_versions(caller: Caller, args: SummaryVersionsInput, note: AuditNote) -> Versions:
    """One agent's running summary, newest version first, the version the next page starts
    before (None on the last page) and how many versions are older than this page. Versions
    are the order: created_at is whichever server's clock wrote the row."""
    note.target("state", args.agent)
    versions = StateVersion.objects.filter(project=caller.project, agent=args.agent)
    if args.before_version is not None:
        versions = versions.filter(version__lt=args.before_version)
    found = list(versions.order_by("-version")[: args.limit + 1])
    if len(found) <= args.limit:
        return Versions(found, None, 0)
    found = found[: args.limit]
    older = versions.filter(version__lt=found[-1].version).count()
    return Versions(found, found[-1].version, older)
