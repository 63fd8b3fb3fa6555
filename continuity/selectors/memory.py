from __future__ import annotations

from audit.recorder import AuditNote
from continuity.budget import clip, one_line
from continuity.inputs import MemoryGetInput, MemorySearchInput
from continuity.models import Memory
from continuity.outputs import MemoryGetOut, MemorySearchOut, SearchHitOut
from continuity.presenters import memory_out
from continuity.search_terms import parse
from continuity.selectors import fulltext
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
    """Full-text search over titles, contents and rationales, best matches first, in one
    statement that reads the full-text index and a bounded set of its matches (fulltext)."""
    found = fulltext.search(caller.project.pk, parse(args.query), args.kind, args.limit)
    return MemorySearchOut(
        query=args.query,
        results=[
            SearchHitOut(
                id=hit.id,
                kind=hit.kind,
                title=hit.title,
                preview=clip(one_line(hit.content_start), SEARCH_PREVIEW_BYTES),
                supersedes=hit.supersedes_id,
                created_at=hit.created_at,
            )
            for hit in found
        ],
    )
