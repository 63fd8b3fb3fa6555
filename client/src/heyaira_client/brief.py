"""The compact Markdown brief of a recovery: what `heyaira context` prints and what the session
hooks inject. Bounded like continuity_context itself (previews, not contents), and it says what
it leaves out: a list cut short ends with "… and N more", and a task waiting on others says so
instead of passing for a plain todo."""

from __future__ import annotations

from typing import Any

from heyaira_client.models import Context, Recovery, TaskSummary

_LINE = 200  # characters of a preview shown per line


def _short(text: str, limit: int = _LINE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _count(context: Context, name: str, shown: int) -> int:
    return context.counts.get(name, shown)


def _more(context: Context, name: str, shown: int, what: str, where: str) -> list[str]:
    """The closing line of a list the server cut: how many more there are, and where they are."""
    hidden = _count(context, name, shown) - shown
    if hidden <= 0:
        return []
    capped = name in (context.raw.get("limits") or {}).get("counts_capped", [])
    amount = f"at least {hidden:,}" if capped else f"{hidden:,}"
    return [f"- … and {amount} more {what} ({where})"]


def _status(task: TaskSummary) -> str:
    if task.ready:
        return "ready"
    if task.waiting_on_count:
        return f"{task.status}, waiting on {task.waiting_on_count}"
    return task.status


def _task_lines(task: TaskSummary, titles: dict[str, str]) -> list[str]:
    blocked = f", {task.blocker_count} blockers" if task.blocker_count else ""
    lines = [
        f"- [{_status(task)}] {_short(task.title, 120)} (`{task.id}`, v{task.version}{blocked})"
    ]
    if task.waiting_on_count:
        named = [
            f"{_short(titles[i], 60)} (`{i}`)" if i in titles else f"`{i}`" for i in task.waiting_on
        ]
        rest = task.waiting_on_count - len(named)
        if rest > 0:
            named.append(f"{rest} more (`heyaira tasks` shows them)")
        lines.append(f"  waiting on: {', '.join(named)}")
    if task.lease:
        lines.append(f"  {_lease_line(task.lease)}")
    if task.next_step:
        lines.append(f"  next: {_short(task.next_step)}")
    return lines


def _lease_line(lease: dict[str, Any]) -> str:
    """Who holds the task and until when: a successor of a crashed session learns when its
    predecessor's claim runs out and `heyaira claim --next` can take the task over."""
    holder = lease.get("holder") or {}
    who = f"{_short(str(holder.get('actor', '')), 60)}, session `{holder.get('session_ref', '')}`"
    until = lease.get("expires_at", "")
    state = lease.get("state")
    if state == "expired":
        return f"lease: held by {who}; expired at {until}: claimable now (`heyaira claim --next`)"
    if state == "expiring":
        return f"lease: yours ({who}), expiring at {until}: renew it (task_heartbeat)"
    return f"lease: held by {who} until {until}; claimable after that if not renewed"


def _tasks(context: Context) -> list[str]:
    shown = len(context.tasks)
    total = _count(context, "open_tasks", shown)
    ready = context.counts.get("ready_tasks")
    heading = (
        f"## Open tasks ({total}, {ready} ready)"
        if ready is not None
        else (f"## Open tasks ({total})")
    )
    lines = [heading, ""]
    if not context.tasks:
        lines.append("- none")
    titles = {task.id: task.title for task in context.tasks}
    for task in context.tasks:
        lines += _task_lines(task, titles)
    return lines + _more(context, "open_tasks", shown, "open tasks", "`heyaira tasks` lists them")


def render_brief(recovery: Recovery) -> str:
    identity, context = recovery.identity, recovery.context
    principal = identity.principal
    lines = [
        f"# HeyAira: {context.project.name} ({context.project.slug})",
        "",
        f"Verified server `{identity.resource}` (instance `{identity.instance}`), "
        f"acting as {principal.actor} ({principal.role}; {', '.join(principal.scopes)}).",
        "Claim a ready task with `task_update(expected_version=...)` and hand over with a work "
        "receipt.",
    ]
    if context.state is not None:
        lines += [
            "",
            f"## Running summary ({context.state.agent}, v{context.state.version})",
            "",
            context.state.preview.removeprefix("# Running summary").strip(),
        ]
    lines += ["", *_tasks(context)]
    decisions = [m for m in context.memories if m.kind == "decision"]
    notes = [m for m in context.memories if m.kind != "decision"]
    for heading, name, memories in (
        ("Decisions", "decisions", decisions),
        ("Notes", "notes", notes),
    ):
        if memories:
            lines += ["", f"## {heading}", ""]
            for memory in memories:
                title = f"**{_short(memory.title, 100)}**: " if memory.title else ""
                lines.append(f"- {title}{_short(memory.preview)} (`{memory.id}`)")
            lines += _more(
                context, name, len(memories), heading.lower(), "`memory_search` finds them"
            )
    if context.receipts:
        lines += ["", "## Recent receipts", ""]
        for receipt in context.receipts:
            lines.append(f"- task `{receipt.task_id}`: {_short(receipt.summary)}")
        lines += _more(
            context, "receipts", len(context.receipts), "receipts", "`task_get` shows a task's"
        )
    return "\n".join(lines) + "\n"
