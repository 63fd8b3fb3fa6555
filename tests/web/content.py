"""Project content for the page tests: a few rows through the services (so audit rows exist),
or many in bulk for the query-count pins."""

from __future__ import annotations

from typing import Any

from audit.models import AuditEvent, Outcome
from audit.recorder import SecurityContext, record_security_event
from continuity.models import Memory, StateVersion, Task, WorkReceipt
from continuity.services import memory_add, state_put, task_create, task_update
from core.access import Caller
from projects.models import Project
from tests.continuity.helpers import as_json
from tests.factories import World, wc


def story(world: World) -> dict[str, Any]:
    """alpha's contributor works on a task with two receipts, a decision superseded by another,
    a note, and two versions of a running summary."""
    return story_as(world.caller("contributor"))


def story_as(carla: Caller) -> dict[str, Any]:
    """The story, told by any caller who may write (the live-server tests tell it too), in a
    project bound to acme/app."""
    task = as_json(
        task_create(
            carla,
            write_context=wc(carla),
            title="Ship the dashboard",
            description="Members see their agents' tasks.\nAcceptance: every page has a test.",
            next_step="Write the views",
            repository_ref={"repository": "acme/app", "branch": "web-ui"},
        )
    )
    moved = as_json(
        task_update(
            carla,
            write_context=wc(carla),
            task_id=task["id"],
            expected_version=1,
            status="in_progress",
            blockers=["Waiting for the chain branch"],
            work_receipt={
                "session_ref": "session-one",
                "summary": "Wrote the selectors.",
                "tests": [{"name": "pytest tests/web", "result": "passed"}],
                "commits": ["abcdef1234567"],
                "next_step": "Templates",
            },
        )
    )
    task_update(
        carla,
        write_context=wc(carla),
        task_id=task["id"],
        expected_version=moved["task"]["version"],
        next_step="Browser journeys",
        work_receipt={"session_ref": "session-two", "summary": "Wrote the templates."},
    )
    old = as_json(
        memory_add(
            carla,
            write_context=wc(carla),
            kind="decision",
            title="Render pages on the server",
            content="Server-rendered Django templates, no build step.",
            rationale="Fewer moving parts.",
            source="issue 10",
        )
    )
    new = as_json(
        memory_add(
            carla,
            write_context=wc(carla),
            kind="decision",
            title="Render pages on the server, no script",
            content="Server-rendered templates and no JavaScript at all.",
            rationale="The CSP forbids scripts anyway.",
            source="issue 10",
            supersedes=old["id"],
        )
    )
    note = as_json(
        memory_add(
            carla, write_context=wc(carla), kind="note", content="Keyset pagination everywhere."
        )
    )
    for version in (1, 2):
        state_put(
            carla,
            write_context=wc(carla),
            agent="codex",
            body=f"# Running summary\n- version {version} of the goal",
        )
    return {"task": task["id"], "old": old["id"], "new": new["id"], "note": note["id"]}


def bulk(project: Project, rows: int) -> dict[str, Any]:
    """`rows` open tasks, receipts on the first, memories (each superseding the one before),
    summary versions of `rows` agents, and audit events: enough to tell a constant number of
    queries from one that grows."""
    tasks = Task.objects.bulk_create(
        Task(project=project, title=f"t{n}", description="d", created_by="b", updated_by="b")
        for n in range(rows)
    )
    WorkReceipt.objects.bulk_create(
        WorkReceipt(
            project=project, task=tasks[0], session_ref=f"s{n}", summary="s", task_version=1
        )
        for n in range(rows)
    )
    # Each decision supersedes the one before: a chain of `rows`, written in one statement
    # (a memory's id is made before it is saved, so the next one can name it).
    chain: list[Memory] = []
    for n in range(rows):
        chain.append(
            Memory(
                project=project,
                kind="decision",
                title=f"m{n}",
                content=f"deploy step {n}",
                author="bulk",
                supersedes=chain[-1] if chain else None,
            )
        )
    Memory.objects.bulk_create(chain)
    previous = chain[-1] if chain else None
    StateVersion.objects.bulk_create(
        StateVersion(project=project, agent=f"agent-{n}", version=1, body="# Running summary\n- x")
        for n in range(rows)
    )
    AuditEvent.objects.bulk_create(
        AuditEvent(
            project_id=project.pk, actor_type="user", operation="task_get", outcome="success"
        )
        for _ in range(rows)
    )
    return {"task": tasks[0].pk, "memory": previous.pk if previous else None}


_CONTEXT_FIELDS = set(SecurityContext.__dataclass_fields__) - {"extra_targets"}


def record_events(project: Project, count: int, **fields: Any) -> list[AuditEvent]:
    """`count` audit events of the project through the recorder (so each is chained like any
    other), oldest first; `fields` name any of the event's fields."""
    context = SecurityContext(**{k: v for k, v in fields.items() if k in _CONTEXT_FIELDS})
    for _ in range(count):
        record_security_event(
            fields.get("operation", "task_get"),
            fields.get("outcome", Outcome.SUCCESS),
            context,
            project=project,
            target_type=fields.get("target_type", ""),
            target_id=fields.get("target_id", ""),
            error_code=fields.get("error_code", ""),
        )
    newest = AuditEvent.objects.filter(project_id=project.pk).order_by("-seq")[:count]
    return list(reversed(newest))


# Titles as people write them: long words, the kind a phone must not break mid-word.
BUSY_TITLES = (
    "Improve migrations for the audit tables",
    "Internationalisation of the consent page",
    "Observability: structured logging everywhere",
    "Document the PostgreSQL configuration recommendations",
    "Refactor authentication middleware",
    "Accessibility review of the dashboard",
    "Rate-limit anonymous registration attempts",
    "Investigate intermittent synchronisation failures",
    "Benchmark concurrent task claiming",
    "Replace hand-written serialisers with presenters",
)


def busy_story(carla: Caller, *, tasks: int = 30) -> dict[str, Any]:
    """`tasks` tasks in every status, some blocked by others, with receipts whose tests passed
    and failed, and decisions, notes and a running summary written in Markdown."""
    context = wc(carla)
    made: list[dict[str, Any]] = []
    for n in range(tasks):
        title = f"{BUSY_TITLES[n % len(BUSY_TITLES)]} ({n + 1})"
        blocked_by = [made[n - 1]["id"], made[n - 2]["id"]] if n % 5 == 4 else []
        made.append(
            as_json(
                task_create(
                    carla,
                    write_context=context,
                    title=title,
                    description=(
                        f"## Goal\n\n{title}, **without** breaking the *public* contract.\n\n"
                        "- Acceptance: every page has a test\n- See `docs/operating.md`\n"
                    ),
                    next_step="Write the characterisation tests, then the implementation",
                    repository_ref={"repository": "acme/app", "branch": f"topic-{n}"},
                    blocked_by=blocked_by,
                )
            )
        )
    moves = {0: "done", 1: "done", 2: "cancelled", 3: "in_progress", 6: "in_progress"}
    for n, status in moves.items():
        task = made[n]
        version = 1
        if status == "done":
            moved = as_json(
                task_update(
                    carla,
                    write_context=context,
                    task_id=task["id"],
                    expected_version=version,
                    status="in_progress",
                )
            )
            version = moved["task"]["version"]
        task_update(
            carla,
            write_context=context,
            task_id=task["id"],
            expected_version=version,
            status=status,
            blockers=["Waiting for the **schema** review"] if n == 6 else None,
            work_receipt={
                "session_ref": f"busy-{n}",
                "summary": "Ran the suite; **one** migration test still fails.\n\n"
                "- added `AuditEvent` indexes\n- see [the runbook](https://example.com/run)",
                "tests": [
                    {"name": "pytest tests/audit", "result": "passed"},
                    {"name": "pytest tests/migrations", "result": "failed"},
                ],
                "commits": ["0123456789abcdef0123456789abcdef01234567"],
                "next_step": "Fix the *failing* migration",
            },
        )
    old = as_json(
        memory_add(
            carla,
            write_context=context,
            kind="decision",
            title="Keep the audit chain per project",
            content="Each project's events form **one** hash chain.\n\n1. append\n2. verify",
            rationale="Verification stays *local* to a tenant.",
            source="design review",
        )
    )
    memory_add(
        carla,
        write_context=context,
        kind="decision",
        title="Keep the audit chain per project, checkpointed",
        content="As before, plus `audit_checkpoint` heads kept **outside** the server.\n\n"
        "<script>alert('raw html')</script> [click](javascript:alert(1))",
        rationale="A chain cut short must be detectable.",
        source="design review",
        supersedes=old["id"],
    )
    memory_add(
        carla,
        write_context=context,
        kind="note",
        title="Characterisation tests first",
        content="Write *characterisation* tests before refactoring:\n\n"
        "```\npytest tests/web -q\n```",
    )
    state_put(
        carla,
        write_context=context,
        agent="claude-code",
        body="# Running summary\n\n## Goal\nMake the pages readable on phones.\n\n"
        "## Done\n- cards on narrow screens\n\n## Pending\n- **screenshots**",
    )
    return {"tasks": [task["id"] for task in made], "old": old["id"]}
