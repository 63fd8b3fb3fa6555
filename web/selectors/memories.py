"""Small reads beside continuity's own on the memory and task pages: the titles of the decisions
a memory supersedes or is superseded by, and how many receipts follow a page of them. Each
is one query, on the Caller's project."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Q, Subquery

from continuity.models import Memory, WorkReceipt
from core.access import Caller
from web.markdown import plain_text

TITLE_CHARS = 120


@dataclass(frozen=True)
class MemoryTitle:
    id: str
    title: str  # its title, or the start of its content when it has none
    kind: str


def memory_titles(caller: Caller, ids: list[str]) -> dict[str, MemoryTitle]:
    if not ids:
        return {}
    found = Memory.objects.filter(project=caller.project, pk__in=ids).values_list(
        "pk", "title", "kind", "content"
    )
    titles = {}
    for pk, title, kind, content in found:
        shown = title or plain_text(content[:600])[:TITLE_CHARS]
        titles[str(pk)] = MemoryTitle(str(pk), shown, kind)
    return titles


def receipts_after(caller: Caller, task_id: UUID, last: UUID) -> int:
    """How many of the task's receipts are older than the receipt `last`."""
    receipts = WorkReceipt.objects.filter(project=caller.project, task_id=task_id)
    # Its stored time, not the millisecond one of the JSON: receipts a microsecond apart exist.
    moment = Subquery(receipts.filter(pk=last).values("created_at")[:1])
    return receipts.filter(Q(created_at__lt=moment) | Q(created_at=moment, id__lt=last)).count()
