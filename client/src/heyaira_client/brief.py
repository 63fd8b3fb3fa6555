"""The compact Markdown brief of a recovery: what `heyaira context` prints and what the session
hooks inject. Bounded like continuity_context itself (previews, not contents)."""

from __future__ import annotations

from heyaira_client.models import Recovery

_LINE = 200  # characters of a preview shown per line


def _short(text: str, limit: int = _LINE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_brief(recovery: Recovery) -> str:
    identity, context = recovery.identity, recovery.context
    principal = identity.principal
    lines = [
        f"# HeyAira: {context.project.name} ({context.project.slug})",
        "",
        f"Verified server `{identity.resource}` (instance `{identity.instance}`), "
        f"acting as {principal.actor} ({principal.role}; {', '.join(principal.scopes)}).",
        "Claim a task with `task_update(expected_version=...)` and hand over with a work receipt.",
    ]
    if context.state is not None:
        lines += [
            "",
            f"## Running summary ({context.state.agent}, v{context.state.version})",
            "",
            context.state.preview.removeprefix("# Running summary").strip(),
        ]
    lines += ["", f"## Open tasks ({context.counts.get('open_tasks', len(context.tasks))})", ""]
    if not context.tasks:
        lines.append("- none")
    for task in context.tasks:
        blocked = f", {task.blocker_count} blockers" if task.blocker_count else ""
        lines.append(
            f"- [{task.status}] {_short(task.title, 120)} (`{task.id}`, v{task.version}{blocked})"
        )
        if task.next_step:
            lines.append(f"  next: {_short(task.next_step)}")
    decisions = [m for m in context.memories if m.kind == "decision"]
    notes = [m for m in context.memories if m.kind != "decision"]
    for heading, memories in (("Decisions", decisions), ("Notes", notes)):
        if memories:
            lines += ["", f"## {heading}", ""]
            for memory in memories:
                title = f"**{_short(memory.title, 100)}**: " if memory.title else ""
                lines.append(f"- {title}{_short(memory.preview)} (`{memory.id}`)")
    if context.receipts:
        lines += ["", "## Recent receipts", ""]
        for receipt in context.receipts:
            lines.append(f"- task `{receipt.task_id}`: {_short(receipt.summary)}")
    return "\n".join(lines) + "\n"
