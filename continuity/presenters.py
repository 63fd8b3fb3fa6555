"""The JSON shapes of continuity objects, shared by every transport so MCP and REST agree."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from continuity.models import Memory, StateVersion, Task, TaskStatus, WorkReceipt
from continuity.readiness import split_ids
from projects.models import Project, Repository


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def project_json(project: Project) -> dict[str, Any]:
    return {"id": str(project.pk), "slug": project.slug, "name": project.name}


def repository_json(repository: Repository) -> dict[str, Any]:
    return {
        "repository": repository.full_name,
        "provider": repository.provider,
        "url": repository.url,
        "default_branch": repository.default_branch,
    }


def memory_json(memory: Memory) -> dict[str, Any]:
    return {
        "id": str(memory.pk),
        "kind": memory.kind,
        "title": memory.title,
        "content": memory.content,
        "rationale": memory.rationale,
        "source": memory.source,
        "supersedes": _id_or_none(memory.supersedes_id),
        "author": memory.author,
        "created_at": rfc3339(memory.created_at),
    }


def memory_ack_json(memory: Memory) -> dict[str, Any]:
    """memory_add's result: what a retry must return unchanged (no content, no timestamps of
    later events)."""
    return {
        "id": str(memory.pk),
        "kind": memory.kind,
        "title": memory.title,
        "supersedes": _id_or_none(memory.supersedes_id),
        "created_at": rfc3339(memory.created_at),
    }


def task_json(task: Task) -> dict[str, Any]:
    """A task read through continuity.readiness.with_readiness (its dependencies and readiness
    come from that query's annotations)."""
    return {
        "id": str(task.pk),
        "title": task.title,
        "description": task.description,
        "status": task.status,
        "version": task.version,
        "next_step": task.next_step,
        "blockers": list(task.blockers),
        "handoff_note": task.handoff_note,
        "repository_ref": task.repository_ref,
        **readiness_json(task),
        "lease": lease_json(task),
        "created_by": task.created_by,
        "updated_by": task.updated_by,
        "created_at": rfc3339(task.created_at),
        "updated_at": rfc3339(task.updated_at),
    }


def lease_json(task: Task | dict[str, Any]) -> dict[str, Any] | None:
    """The lease of an in_progress task (a Task, or a row of its lease columns and status), or
    None: an expired lease still shows (with its time) until someone takes the task over."""
    row = task if isinstance(task, dict) else vars(task)
    expires = row["lease_expires_at"]
    if row["status"] != TaskStatus.IN_PROGRESS or expires is None:
        return None
    return {
        "holder": {"actor": row["lease_actor"], "session_ref": row["lease_session_ref"]},
        "expires_at": rfc3339(expires),
    }


def readiness_json(task: Task) -> dict[str, Any]:
    return {
        "blocked_by": split_ids(task.blocked_ids),  # type: ignore[attr-defined]
        "ready": bool(task.ready),  # type: ignore[attr-defined]
    }


def task_ack_json(task: Task) -> dict[str, Any]:
    """task_create's result, replayed verbatim for a retry with the same key."""
    return {
        "id": str(task.pk),
        "title": task.title,
        "status": task.status,
        "version": task.version,
        "created_at": rfc3339(task.created_at),
    }


def receipt_json(receipt: WorkReceipt) -> dict[str, Any]:
    return {
        "id": str(receipt.pk),
        "task_id": str(receipt.task_id),
        "session_ref": receipt.session_ref,
        "summary": receipt.summary,
        "tests": list(receipt.tests),
        "commits": list(receipt.commits),
        "next_step": receipt.next_step,
        "blockers": list(receipt.blockers),
        "task_version": receipt.task_version,
        "author": receipt.author,
        "created_at": rfc3339(receipt.created_at),
    }


def state_json(state: StateVersion) -> dict[str, Any]:
    return {
        "agent": state.agent,
        "version": state.version,
        "body": state.body,
        "author": state.author,
        "created_at": rfc3339(state.created_at),
    }


def test_tally(tests: list[dict[str, str]]) -> dict[str, int]:
    tally: dict[str, int] = {}
    for run in tests:
        tally[run["result"]] = tally.get(run["result"], 0) + 1
    return tally


def _id_or_none(value: object) -> str | None:
    return None if value is None else str(value)
