"""beads (github.com/steveyegge/beads): `.beads/issues.jsonl`, one issue a line, as `bd export`
writes it: id, title, description, design, acceptance_criteria, notes, status, priority (0-4),
issue_type, assignee, owner, labels, created_at, created_by, updated_at, closed_at,
close_reason, dependencies [{issue_id, depends_on_id, type, created_at}] and comments
[{id, issue_id, author, text, created_at}].

Issues become tasks; `blocks` dependencies become task dependencies; comments become notes that
name their task. Statuses other than open, in_progress, blocked and closed (deferred, pinned,
hooked, tombstone...) and other dependency types have no HeyAira meaning: reported, not mapped.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from continuity.bundle.sources.mapping import MappedMemory, MappedTask, Mapping, fingerprint
from continuity.models import TaskStatus

STATUSES = {
    "open": TaskStatus.TODO,
    "in_progress": TaskStatus.IN_PROGRESS,
    "blocked": TaskStatus.BLOCKED,
    "closed": TaskStatus.DONE,
}
SECTIONS = (
    ("design", "Design"),
    ("acceptance_criteria", "Acceptance criteria"),
    ("notes", "Notes"),
    ("close_reason", "Closed because"),
)


def read(path: Path) -> Mapping:
    data = path.read_bytes()
    mapping = Mapping(tool="beads", fingerprint=fingerprint([data]))
    comments: list[tuple[MappedTask, dict[str, Any]]] = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            issue = json.loads(line)
            task = _task(issue)
        except (ValueError, KeyError, TypeError) as error:
            mapping.unmapped.append(f"line {number}: not a beads issue ({error})")
            continue
        if task is None:
            mapping.unmapped.append(
                f"{issue['id']} ({issue['title']}): status {issue.get('status')!r} has no task "
                "status here"
            )
            continue
        for dependency in issue.get("dependencies") or []:
            if dependency.get("type") == "blocks":
                task.blocked_by.append(str(dependency["depends_on_id"]))
            else:
                mapping.unmapped.append(
                    f"{task.key} {dependency.get('type')} {dependency.get('depends_on_id')}: "
                    "only blocks dependencies are mapped"
                )
        mapping.tasks.append(task)
        mapping.mapped.append(f"{task.key} -> task {task.status}: {task.title}")
        comments.extend((task, comment) for comment in issue.get("comments") or [])
    mapping.link()
    for task, comment in comments:
        mapping.memories.append(_note(task, comment))
        mapping.mapped.append(f"{task.key} comment {comment.get('id')} -> note")
    return mapping


def _task(issue: dict[str, Any]) -> MappedTask | None:
    status = STATUSES.get(str(issue.get("status") or "open"))
    if status is None:
        return None
    return MappedTask(
        key=str(issue["id"]),
        title=str(issue["title"]),
        description=_description(issue),
        status=status,
        author=str(issue.get("created_by") or issue.get("owner") or "beads"),
        created_at=_time(issue.get("created_at")),
        updated_at=_time(issue.get("updated_at")),
    )


def _description(issue: dict[str, Any]) -> str:
    facts = [
        f"beads {issue['id']}",
        f"priority P{issue.get('priority', 2)}",
        str(issue.get("issue_type") or "task"),
    ]
    if issue.get("assignee"):
        facts.append(f"assignee {issue['assignee']}")
    if issue.get("labels"):
        facts.append("labels " + ", ".join(map(str, issue["labels"])))
    parts = [str(issue.get("description") or "").strip(), "(" + "; ".join(facts) + ")"]
    parts += [f"{title}: {issue[key]}" for key, title in SECTIONS if issue.get(key)]
    return "\n\n".join(part for part in parts if part)


def _note(task: MappedTask, comment: dict[str, Any]) -> MappedMemory:
    return MappedMemory(
        kind="note",
        title=f"Comment on {task.title}"[:200],
        content=f"On task {task.id} ({task.key}):\n\n{comment.get('text', '')}",
        source=f"beads {task.key} comment {comment.get('id', '')}",
        author=str(comment.get("author") or "beads"),
        created_at=_time(comment.get("created_at")),
    )


def _time(text: Any) -> dt.datetime | None:
    """beads writes RFC 3339 (Go's time.Time): `2026-04-18T16:19:12Z`, maybe with a fraction
    or an offset."""
    if not text:
        return None
    value = dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
