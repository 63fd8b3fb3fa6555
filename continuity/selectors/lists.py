"""The paged reads REST offers beside the MCP tools: every memory, and every receipt of a task.

Each is one page of a bounded size, newest first, with a cursor to the next; the number of
queries does not grow with the data.
"""

from __future__ import annotations

from django.db.models.functions import Substr

from audit.recorder import AuditNote
from continuity.budget import clip, one_line
from continuity.inputs import MemoryListInput, ReceiptListInput
from continuity.models import Memory, Task, WorkReceipt
from continuity.outputs import MemoryListOut, ReceiptListOut
from continuity.presenters import receipt_out, search_hit_out
from continuity.selectors.cursors import page
from core.access import Caller, Capability
from core.errors import NotFound
from core.operations import operation

PREVIEW_BYTES = 280
# Only this much of a memory's content is read to make its preview.
_HEAD = 600


@operation("memory_list", capability=Capability.READ, input_model=MemoryListInput, writes=False)
def memory_list(caller: Caller, args: MemoryListInput, note: AuditNote) -> MemoryListOut:
    """Decisions and notes newest first, as previews with ids to follow."""
    memories = Memory.objects.filter(project=caller.project)
    if args.kind:
        memories = memories.filter(kind=args.kind)
    memories = memories.annotate(head=Substr("content", 1, _HEAD)).defer(
        "content", "rationale", "source"
    )
    found, next_cursor = page(memories, cursor=args.cursor, limit=args.limit, listing="memory_list")
    return MemoryListOut(
        memories=[
            search_hit_out(memory, clip(one_line(memory.head), PREVIEW_BYTES))  # type: ignore[attr-defined]
            for memory in found
        ],
        next_cursor=next_cursor,
    )


@operation("receipt_list", capability=Capability.READ, input_model=ReceiptListInput, writes=False)
def receipt_list(caller: Caller, args: ReceiptListInput, note: AuditNote) -> ReceiptListOut:
    """A task's work receipts newest first."""
    note.target("task", args.task_id)
    if not Task.objects.filter(project=caller.project, pk=args.task_id).exists():
        raise NotFound("No such task in this project.")
    receipts = WorkReceipt.objects.filter(project=caller.project, task_id=args.task_id)
    found, next_cursor = page(
        receipts, cursor=args.cursor, limit=args.limit, listing="receipt_list"
    )
    return ReceiptListOut(receipts=[receipt_out(r) for r in found], next_cursor=next_cursor)
