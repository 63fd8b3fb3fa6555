"""Claude Code's task lists: `~/.claude/tasks/<list-id>/`, one task a JSON file (`<id>.json`):
id, subject, description, activeForm, status (pending, in_progress, completed), blocks,
blockedBy (task ids), owner, metadata. `.lock` and `.highwatermark` are not tasks.

Tasks keep their status (pending -> todo, completed -> done); `blockedBy` becomes dependencies;
the owner and the list go into the description. Another status, or a file that is not a task,
is reported and not mapped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from continuity.bundle.sources.mapping import MappedTask, Mapping, fingerprint
from continuity.models import TaskStatus

STATUSES = {
    "pending": TaskStatus.TODO,
    "in_progress": TaskStatus.IN_PROGRESS,
    "completed": TaskStatus.DONE,
}


def read(path: Path) -> Mapping:
    files = sorted(path.glob("*.json"), key=_order)
    mapping = Mapping(
        tool="claude-code-tasks",
        fingerprint=fingerprint([file.name.encode() + b"\0" + file.read_bytes() for file in files]),
    )
    for file in files:
        try:
            task = json.loads(file.read_text(encoding="utf-8"))
            subject = str(task["subject"])
            key = str(task.get("id") or file.stem)
        except (ValueError, KeyError, TypeError) as error:
            mapping.unmapped.append(f"{file.name}: not a task ({error})")
            continue
        status = STATUSES.get(str(task.get("status") or "pending"))
        if status is None:
            mapping.unmapped.append(
                f"{file.name} ({subject}): status {task.get('status')!r} has no task status here"
            )
            continue
        mapped = MappedTask(
            key=key,
            title=subject,
            description=_description(task, path.name),
            status=status,
            author=str(task.get("owner") or "claude-code"),
            blocked_by=[str(other) for other in task.get("blockedBy") or []],
        )
        mapping.tasks.append(mapped)
        mapping.mapped.append(f"{file.name} -> task {status}: {subject}")
    mapping.link()
    return mapping


def _order(file: Path) -> tuple[int, str]:
    return (int(file.stem), "") if file.stem.isdigit() else (1 << 62, file.stem)


def _description(task: dict[str, Any], list_id: str) -> str:
    facts = [f"Claude Code task {task.get('id')} of list {list_id}"]
    if task.get("owner"):
        facts.append(f"owner {task['owner']}")
    if task.get("activeForm"):
        facts.append(f"shown as: {task['activeForm']}")
    parts = [str(task.get("description") or "").strip(), "(" + "; ".join(facts) + ")"]
    return "\n\n".join(part for part in parts if part)
