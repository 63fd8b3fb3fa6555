from __future__ import annotations

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, Q, QuerySet

from audit.recorder import AuditNote
from continuity.budget import clip, one_line
from continuity.inputs import MemoryGetInput, MemorySearchInput
from continuity.models import MEMORY_SEARCH_VECTOR, Memory
from continuity.outputs import MemoryGetOut, MemorySearchOut
from continuity.presenters import memory_out, search_hit_out
from core.access import Caller, Capability
from core.lookups import project_object
from core.operations import operation

SEARCH_PREVIEW_BYTES = 280


@operation("memory_get", capability=Capability.READ, input_model=MemoryGetInput, writes=False)
def memory_get(caller: Caller, args: MemoryGetInput, note: AuditNote) -> MemoryGetOut:
    """One memory in full, with the decision that superseded it, if any."""
    note.target("memory", args.memory_id)
    memory = project_object(
        Memory, caller, args.memory_id, missing="No such memory in this project."
    )
    successor = (
        Memory.objects.filter(project=caller.project, supersedes=memory)
        .values_list("pk", flat=True)
        .first()
    )
    return MemoryGetOut(memory=memory_out(memory, superseded_by=successor))


@operation("memory_search", capability=Capability.READ, input_model=MemorySearchInput, writes=False)
def memory_search(caller: Caller, args: MemorySearchInput, note: AuditNote) -> MemorySearchOut:
    """Full-text search over titles, contents and rationales, best matches first."""
    memories = Memory.objects.filter(project=caller.project)
    if args.kind:
        memories = memories.filter(kind=args.kind)
    found = _matching(memories, args.query)[: args.limit]
    return MemorySearchOut(
        query=args.query,
        results=[
            search_hit_out(memory, clip(one_line(memory.content[:600]), SEARCH_PREVIEW_BYTES))
            for memory in found
        ],
    )


def _matching(memories: QuerySet[Memory], query: str) -> QuerySet[Memory]:
    if connection.vendor == "postgresql":
        # websearch_to_tsquery accepts any user text (quotes, OR, -term) without syntax errors.
        search = SearchQuery(query, config="english", search_type="websearch")
        return (
            memories.annotate(
                vector=MEMORY_SEARCH_VECTOR, rank=SearchRank(MEMORY_SEARCH_VECTOR, search)
            )
            .filter(vector=search)
            .order_by(F("rank").desc(), "-created_at")
        )
    # SQLite (quick start only): every word must appear in the title, content or rationale.
    condition = Q()
    for word in query.split():
        condition &= (
            Q(title__icontains=word) | Q(content__icontains=word) | Q(rationale__icontains=word)
        )
    return memories.filter(condition).order_by("-created_at")
