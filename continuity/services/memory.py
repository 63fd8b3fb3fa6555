from __future__ import annotations

import uuid

from django.db import IntegrityError

from audit.recorder import AuditNote
from continuity.inputs import MemoryAddInput
from continuity.models import Memory, MemoryKind
from continuity.outputs import MemoryAckOut
from continuity.presenters import memory_ack_out
from continuity.services.idempotency import keyed
from core.access import Caller, Capability
from core.errors import ValidationError
from core.lookups import project_object
from core.operations import operation
from core.statements import insert_row


@operation(
    "memory_add",
    capability=Capability.WRITE,
    input_model=MemoryAddInput,
    once=keyed(MemoryAckOut, target_type="memory"),
)
def memory_add(caller: Caller, args: MemoryAddInput, note: AuditNote) -> MemoryAckOut:
    """Record a decision or a note. Memories are immutable; a decision may supersede one."""
    superseded = _superseded_decision(caller, args.supersedes) if args.supersedes else None
    try:
        # No savepoint: a unique violation here aborts the whole operation anyway.
        memory = Memory(
            project=caller.project,
            kind=args.kind,
            title=args.title,
            content=args.content,
            rationale=args.rationale,
            source=args.source,
            supersedes=superseded,
            author=caller.actor.label,
        )
        insert_row(memory)
    except IntegrityError:
        # Another decision superseded the same one between our check and our insert.
        raise _already_superseded() from None
    note.target("memory", memory.pk)
    return memory_ack_out(memory)


def _superseded_decision(caller: Caller, superseded_id: uuid.UUID) -> Memory:
    old = project_object(
        Memory,
        caller,
        superseded_id,
        missing="The memory named in supersedes does not exist in this project.",
    )
    if old.kind != MemoryKind.DECISION:
        raise ValidationError(fields={"supersedes": "names a note; only decisions are superseded"})
    if Memory.objects.filter(project=caller.project, supersedes=old).exists():
        raise _already_superseded()
    return old


def _already_superseded() -> ValidationError:
    return ValidationError(
        fields={"supersedes": "that decision is already superseded; supersede its successor"}
    )
