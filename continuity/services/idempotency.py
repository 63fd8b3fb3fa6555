"""Idempotent appends: a retry with the same key and payload returns the original result."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

import pydantic

from audit.models import Outcome
from audit.recorder import AuditNote
from continuity.models import IdempotencyRecord
from core.access import Caller
from core.errors import IdempotencyConflict
from core.operations import Once
from core.statements import insert_unless_taken, update_rows

ResultT = TypeVar("ResultT", bound=pydantic.BaseModel)


def payload_fingerprint(args: pydantic.BaseModel) -> str:
    """SHA-256 of the canonical JSON of everything but the key itself."""
    payload = args.model_dump(mode="json", exclude={"idempotency_key"})
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def run_once(
    caller: Caller,
    operation: str,
    args: pydantic.BaseModel,
    note: AuditNote,
    create: Callable[[], ResultT],
    *,
    result_model: type[ResultT],
    target_type: str,
) -> ResultT:
    """Run `create` unless this key was used before; must be called inside the transaction.

    The record is inserted first, before any work. Concurrent first uses of one key then meet at
    the unique constraint: PostgreSQL makes the later inserts wait for the first transaction, and
    once it commits they find the key taken and replay its result (or conflict) instead of
    creating a second row. ON CONFLICT DO NOTHING reports the taken key without an error, so no
    savepoint is needed around it.
    """
    key: str | None = getattr(args, "idempotency_key", None)
    if key is None:
        return create()
    fingerprint = payload_fingerprint(args)
    record = IdempotencyRecord(
        project=caller.project, operation=operation, key=key, fingerprint=fingerprint
    )
    if not insert_unless_taken(record):
        existing = IdempotencyRecord.objects.get(
            project=caller.project, operation=operation, key=key
        )
        if existing.fingerprint != fingerprint:
            raise IdempotencyConflict()
        note.outcome = Outcome.REPLAYED
        note.target(target_type, _result_id(existing.result))
        # Stored as the JSON it was sent as; read back, it is sent as the same bytes.
        return result_model.model_validate(existing.result)
    result = create()
    # By project too: on a database distributed by project that routes it to one shard.
    update_rows(
        IdempotencyRecord,
        where={"project_id": caller.project.pk, "id": record.pk},
        values={"result": result.model_dump(mode="json")},
    )
    return result


def _result_id(result: dict[str, Any]) -> str:
    """The id of the object a stored result is about: its own, or its task's (a claim)."""
    nested = result.get("task")
    if "id" not in result and isinstance(nested, dict):
        return str(nested.get("id", ""))
    return str(result.get("id", ""))


def keyed(result_model: type[ResultT], *, target_type: str) -> Once[ResultT]:
    """The `once` of an append: `@operation(..., once=keyed(MemoryAckOut,
    target_type="memory"))` runs the body through run_once under the operation's own name."""

    def once(
        caller: Caller,
        operation: str,
        args: pydantic.BaseModel,
        note: AuditNote,
        create: Callable[[], ResultT],
    ) -> ResultT:
        return run_once(
            caller,
            operation,
            args,
            note,
            create,
            result_model=result_model,
            target_type=target_type,
        )

    return once
