"""Continuity objects as their output models (continuity.outputs), shared by every operation so
MCP and REST send the same shapes."""

from __future__ import annotations

from typing import Any

from continuity.models import Memory, StateVersion, Task, TaskStatus, WorkReceipt
from continuity.outputs import (
    LeaseHolderOut,
    LeaseOut,
    MemoryAckOut,
    MemoryOut,
    ProjectOut,
    ReceiptOut,
    RepositoryRefOut,
    SearchHitOut,
    StateOut,
    TaskAckOut,
    TaskOut,
    TestRunOut,
)
from continuity.readiness import split_ids
from projects.models import Project


def project_out(project: Project) -> ProjectOut:
    return ProjectOut(id=project.pk, slug=project.slug, name=project.name)


def memory_out(memory: Memory, superseded_by: Any) -> MemoryOut:
    return MemoryOut(
        id=memory.pk,
        kind=memory.kind,
        title=memory.title,
        content=memory.content,
        rationale=memory.rationale,
        source=memory.source,
        supersedes=memory.supersedes_id,
        superseded_by=superseded_by,
        author=memory.author,
        created_at=memory.created_at,
    )


def search_hit_out(memory: Memory, preview: str) -> SearchHitOut:
    """A memory in a list or search results: its preview in place of its texts."""
    return SearchHitOut(
        id=memory.pk,
        kind=memory.kind,
        title=memory.title,
        preview=preview,
        supersedes=memory.supersedes_id,
        created_at=memory.created_at,
    )


def memory_ack_out(memory: Memory) -> MemoryAckOut:
    """memory_add's result: what a retry must return unchanged (no content, no timestamps of
    later events)."""
    return MemoryAckOut(
        id=memory.pk,
        kind=memory.kind,
        title=memory.title,
        supersedes=memory.supersedes_id,
        created_at=memory.created_at,
    )


def task_out(task: Task) -> TaskOut:
    """A task read through continuity.readiness.with_readiness (its dependencies and readiness
    come from that query's annotations)."""
    return TaskOut(
        id=task.pk,
        title=task.title,
        description=task.description,
        status=task.status,
        version=task.version,
        next_step=task.next_step,
        blockers=task.blockers,
        handoff_note=task.handoff_note,
        repository_ref=repository_ref_out(task.repository_ref),
        blocked_by=split_ids(task.blocked_ids),  # type: ignore[attr-defined]
        ready=bool(task.ready),  # type: ignore[attr-defined]
        lease=lease_out(task),
        created_by=task.created_by,
        updated_by=task.updated_by,
        created_at=task.created_at,
        updated_at=task.updated_at,
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
    return TaskAckOut(
        id=task.pk,
        title=task.title,
        status=task.status,
        version=task.version,
        created_at=task.created_at,
    )


def receipt_out(receipt: WorkReceipt) -> ReceiptOut:
    return ReceiptOut(
        id=receipt.pk,
        task_id=receipt.task_id,
        session_ref=receipt.session_ref,
        summary=receipt.summary,
        tests=[TestRunOut(**run) for run in receipt.tests],
        commits=receipt.commits,
        next_step=receipt.next_step,
        blockers=receipt.blockers,
        task_version=receipt.task_version,
        author=receipt.author,
        created_at=receipt.created_at,
    )


def state_out(state: StateVersion) -> StateOut:
    return StateOut(
        agent=state.agent,
        version=state.version,
        body=state.body,
        author=state.author,
        created_at=state.created_at,
    )


def test_tally(tests: list[dict[str, str]]) -> dict[str, int]:
    tally: dict[str, int] = {}
    for run in tests:
        tally[run["result"]] = tally.get(run["result"], 0) + 1
    return tally
