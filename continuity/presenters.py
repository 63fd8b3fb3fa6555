"""Continuity objects as their output models (continuity.outputs), shared by every operation so
MCP and REST send the same shapes."""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

from continuity.models import Memory, StateVersion, Task, TaskStatus, WorkReceipt
from continuity.outputs import (
    LeaseHolderOut,
    LeaseOut,
    MemoryAckOut,
    MemoryOut,
    Output,
    ProjectOut,
    ReceiptOut,
    RepositoryRefOut,
    SearchHitOut,
    StateOut,
    TaskAckOut,
    TaskOut,
)
from continuity.readiness import split_ids
from projects.models import Project

OutputT = TypeVar("OutputT", bound=Output)


def like_named(model: type[OutputT], source: object, **computed: Any) -> OutputT:
    """`model` with each field read from the attribute of the same name on `source` (a model
    instance, say), except the fields given in `computed`."""
    if not computed:
        return model.model_validate(source, from_attributes=True)  # read by pydantic-core
    copied = {name: getattr(source, name) for name in _copied(model, frozenset(computed))}
    return model(**copied, **computed)


@cache
def _copied(model: type[Output], computed: frozenset[str]) -> tuple[str, ...]:
    # Worked out once per model: presenters run for every row of every list.
    return tuple(name for name in model.model_fields if name not in computed)


def project_out(project: Project) -> ProjectOut:
    return like_named(ProjectOut, project)


def memory_out(memory: Memory, superseded_by: Any) -> MemoryOut:
    return like_named(
        MemoryOut, memory, supersedes=memory.supersedes_id, superseded_by=superseded_by
    )


def search_hit_out(memory: Memory, preview: str) -> SearchHitOut:
    """A memory in a list or search results: its preview in place of its texts."""
    return like_named(SearchHitOut, memory, preview=preview, supersedes=memory.supersedes_id)


def memory_ack_out(memory: Memory) -> MemoryAckOut:
    """memory_add's result: what a retry must return unchanged (no content, no timestamps of
    later events)."""
    return like_named(MemoryAckOut, memory, supersedes=memory.supersedes_id)


def task_out(task: Task) -> TaskOut:
    """A task read through continuity.readiness.with_readiness (its dependencies and readiness
    come from that query's annotations)."""
    return like_named(
        TaskOut,
        task,
        repository_ref=repository_ref_out(task.repository_ref),
        blocked_by=split_ids(task.blocked_ids),  # type: ignore[attr-defined]
        ready=bool(task.ready),  # type: ignore[attr-defined]
        lease=lease_out(task),
    )


def lease_out(task: Task | dict[str, Any]) -> LeaseOut | None:
    """The lease of an in_progress task (a Task, or a row of its status and lease columns), or
    None: an expired lease still shows (with its time) until someone takes the task over."""
    row = task if isinstance(task, dict) else vars(task)
    expires = row["lease_expires_at"]
    if row["status"] != TaskStatus.IN_PROGRESS or expires is None:
        return None
    holder = LeaseHolderOut(actor=row["lease_actor"], session_ref=row["lease_session_ref"])
    return LeaseOut(holder=holder, expires_at=expires)


def repository_ref_out(ref: dict[str, Any] | None) -> RepositoryRefOut | None:
    """A task's stored repository reference (a JSON object, its keys in any order)."""
    if ref is None:
        return None
    return RepositoryRefOut(
        repository=ref["repository"], branch=ref.get("branch"), commit=ref.get("commit")
    )


def task_ack_out(task: Task) -> TaskAckOut:
    """task_create's result, replayed verbatim for a retry with the same key."""
    return like_named(TaskAckOut, task)


def receipt_out(receipt: WorkReceipt) -> ReceiptOut:
    # Its tests are stored as {name, result} objects: TestRunOut checks each.
    return like_named(ReceiptOut, receipt)


def state_out(state: StateVersion) -> StateOut:
    return like_named(StateOut, state)


def test_tally(tests: list[dict[str, str]]) -> dict[str, int]:
    tally: dict[str, int] = {}
    for run in tests:
        tally[run["result"]] = tally.get(run["result"], 0) + 1
    return tally
