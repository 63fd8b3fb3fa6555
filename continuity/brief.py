"""The continuity brief: the compact Markdown a new session starts from.

One text, written here once: the MCP prompt `resume` returns it (continuity.mcp.prompts), and
the client's SessionStart hook and `heyaira context` inject or print what that prompt returns.
It is made of server_identity and continuity_context, so it is as bounded as the recovery index
(previews, not contents), and it says what it leaves out: a list cut short ends with "… and N
more" and where the rest is, and a task waiting on others says so instead of passing for a
plain todo.
"""

from __future__ import annotations

import uuid

from continuity.outputs import (
    ContextLeaseOut,
    ContextOut,
    ContextTaskOut,
    CountName,
    IdentityOut,
    rfc3339,
)

LINE = 200  # characters of a preview shown per line


def short(text: str, limit: int = LINE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_brief(identity: IdentityOut, context: ContextOut) -> str:
    principal = identity.principal
    lines = [
        f"# HeyAira: {context.project.name} ({context.project.slug})",
        "",
        f"Server `{identity.resource}` (instance `{identity.instance}`), acting as "
        f"{principal.actor} ({principal.role}; {', '.join(principal.scopes)}).",
        "Claim a ready task with `task_claim_next`, or `task_update(expected_version=...)`, and "
        "hand over with a work receipt.",
    ]
    if context.state is not None:
        lines += [
            "",
            f"## Running summary ({context.state.agent}, v{context.state.version})",
            "",
            context.state.preview.removeprefix("# Running summary").strip(),
        ]
    lines += ["", *_tasks(context), *_memories(context), *_receipts(context)]
    return "\n".join(lines) + "\n"


def _more(context: ContextOut, name: CountName, shown: int, what: str, where: str) -> list[str]:
    """The closing line of a list the server cut: how many more there are, and where they are."""
    hidden = getattr(context.counts, name) - shown
    if hidden <= 0:
        return []
    amount = f"at least {hidden:,}" if name in context.limits.counts_capped else f"{hidden:,}"
    return [f"- … and {amount} more {what} ({where})"]


def _tasks(context: ContextOut) -> list[str]:
    counts = context.counts
    lines = [f"## Open tasks ({counts.open_tasks}, {counts.ready_tasks} ready)", ""]
    if not context.tasks:
        lines.append("- none")
    titles = {task.id: task.title for task in context.tasks}
    for task in context.tasks:
        lines += _task_lines(task, titles)
    return lines + _more(
        context, "open_tasks", len(context.tasks), "open tasks", "`task_list` lists them"
    )


def _status(task: ContextTaskOut) -> str:
    if task.ready:
        return "ready"
    if task.waiting_on_count:
        return f"{task.status}, waiting on {task.waiting_on_count}"
    return task.status


def _task_lines(task: ContextTaskOut, titles: dict[uuid.UUID, str]) -> list[str]:
    blocked = f", {task.blocker_count} blockers" if task.blocker_count else ""
    lines = [
        f"- [{_status(task)}] {short(task.title, 120)} (`{task.id}`, v{task.version}{blocked})"
    ]
    if task.waiting_on_count:
        named = [
            f"{short(titles[i], 60)} (`{i}`)" if i in titles else f"`{i}`" for i in task.waiting_on
        ]
        rest = task.waiting_on_count - len(named)
        if rest > 0:
            named.append(f"{rest} more (`task_get` shows them)")
        lines.append(f"  waiting on: {', '.join(named)}")
    if task.lease is not None:
        lines.append(f"  {_lease_line(task.lease)}")
    if task.next_step:
        lines.append(f"  next: {short(task.next_step)}")
    return lines


def _lease_line(lease: ContextLeaseOut) -> str:
    """Who holds the task and until when: a successor of a crashed session learns when its
    predecessor's claim runs out and task_claim_next can take the task over."""
    holder = lease.holder
    who = f"{short(holder.actor, 60)}, session `{holder.session_ref}`"
    until = rfc3339(lease.expires_at)
    if lease.state == "expired":
        return f"lease: held by {who}; expired at {until}: claimable now (`task_claim_next`)"
    if lease.state == "expiring":
        return f"lease: yours ({who}), expiring at {until}: renew it (`task_heartbeat`)"
    return f"lease: held by {who} until {until}; claimable after that if not renewed"


def _memories(context: ContextOut) -> list[str]:
    lines: list[str] = []
    for heading, name in (("Decisions", "decision"), ("Notes", "note")):
        memories = [memory for memory in context.memories if memory.kind == name]
        if not memories:
            continue
        lines += ["", f"## {heading}", ""]
        for memory in memories:
            title = f"**{short(memory.title, 100)}**: " if memory.title else ""
            lines.append(f"- {title}{short(memory.preview)} (`{memory.id}`)")
        counted: CountName = "decisions" if name == "decision" else "notes"
        lines += _more(
            context, counted, len(memories), heading.lower(), "`memory_search` finds them"
        )
    return lines


def _receipts(context: ContextOut) -> list[str]:
    if not context.receipts:
        return []
    lines = ["", "## Recent receipts", ""]
    for receipt in context.receipts:
        lines.append(f"- task `{receipt.task_id}`: {short(receipt.summary)}")
    return lines + _more(
        context, "receipts", len(context.receipts), "receipts", "`task_get` shows a task's"
    )
