"""continuity_context: the bounded, read-only recovery index a new session reads once.

Its size and its number of SQL queries do not grow with the data (docs/architecture.md): every list
has a hard limit, long texts are read only as a prefix, and the JSON is fitted to a byte budget
(continuity.budget).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Case, F, When
from django.db.models.functions import Length, Substr
from django.utils import timezone

from audit.recorder import AuditNote
from continuity.budget import Preview, clip_chars, fit, one_line
from continuity.inputs import ContinuityContextInput
from continuity.leases import LEASE_COLUMNS
from continuity.models import OPEN_STATUSES, Memory, MemoryKind, StateVersion, Task, WorkReceipt
from continuity.outputs import ContextOut, rfc3339
from continuity.presenters import lease_out, test_tally
from continuity.readiness import ready_tasks, split_ids, with_waiting
from core.access import Caller, Capability
from core.operations import operation
from projects.models import Project, ProjectRepository

DEFAULT_LIMITS = {"memory_limit": 10, "task_limit": 20, "receipt_limit": 10}
LIMIT_CAPS = {"memory_limit": 50, "task_limit": 100, "receipt_limit": 50}
REPOSITORY_LIMIT = 10
# JSON bytes at the default limits and at the caps; in between the budget grows with the items.
DEFAULT_BUDGET = 16_000
CAPPED_BUDGET = 64_000
PREVIEW_CHARS = 280
# Counts stop here: beyond it, "10,000 or more" is what a new session needs to know.
COUNT_CAP = 10_000
STATE_PREVIEW_CHARS = 2_000
# Ids of a task's open dependencies shown per entry, up to the default task_limit and beyond
# it: 100 entries of 20 ids each would not fit the budget (task_get has them all).
WAITING_IDS = 3
WAITING_IDS_BEYOND_DEFAULT = 1
# Only this much of a long text is read from the database to make its preview.
_HEAD = 2 * PREVIEW_CHARS


@operation(
    "continuity_context",
    capability=Capability.READ,
    input_model=ContinuityContextInput,
    writes=False,
)
def continuity_context(caller: Caller, args: ContinuityContextInput, note: AuditNote) -> ContextOut:
    """The newest memories, open tasks (ready ones first, oldest first: the order
    task_claim_next takes them in), newest receipts and running summary, in one bounded
    response with ids to follow."""
    note.target("project", caller.project.pk)
    limits, clamped = _applied_limits(args)
    counts, counts_capped = _counts(caller.project)
    response = {
        "project": _project(caller.project),
        "repositories": _repositories(caller),
        "memories": _memories(caller, limits["memory_limit"]),
        "tasks": _tasks(caller, limits["task_limit"]),
        "receipts": _receipts(caller, limits["receipt_limit"]),
        "state": _state(caller, args.agent),
        "limits": {
            **limits,
            "clamped": clamped,
            "count_cap": COUNT_CAP,
            "counts_capped": counts_capped,
        },
        "counts": counts,
    }
    # Built as JSON first: the previews are cut to what the JSON's byte budget leaves them.
    return ContextOut.model_validate(fit(response, budget_for(limits)))


def budget_for(limits: dict[str, int]) -> int:
    items = sum(limits.values())
    default_items = sum(DEFAULT_LIMITS.values())
    if items <= default_items:
        return DEFAULT_BUDGET
    return min(CAPPED_BUDGET, DEFAULT_BUDGET * items // default_items)


def _applied_limits(args: ContinuityContextInput) -> tuple[dict[str, int], dict[str, int]]:
    asked = {name: getattr(args, name) for name in DEFAULT_LIMITS}
    applied = {name: min(value, LIMIT_CAPS[name]) for name, value in asked.items()}
    clamped = {name: asked[name] for name in asked if asked[name] != applied[name]}
    return applied, clamped


def _project(project: Project) -> dict[str, Any]:
    return {"id": str(project.pk), "slug": project.slug, "name": Preview(project.name)}


def _repositories(caller: Caller) -> list[dict[str, Any]]:
    bindings = (
        ProjectRepository.objects.filter(project=caller.project)
        .select_related("repository")
        .order_by("created_at", "id")[:REPOSITORY_LIMIT]
    )
    return [
        {
            "repository": Preview(b.repository.full_name, 0.5),
            "provider": b.repository.provider,
            "default_branch": Preview(b.repository.default_branch, 0.5),
            "url": Preview(b.repository.url, 0.5),
        }
        for b in bindings
    ]


def _memories(caller: Caller, limit: int) -> list[dict[str, Any]]:
    rows = (
        Memory.objects.filter(project=caller.project)
        .annotate(head=Substr("content", 1, _HEAD), chars=Length("content"))
        .order_by("-created_at", "-id")
        .values("id", "kind", "title", "head", "chars", "supersedes_id", "created_at")[:limit]
    )
    return [
        {
            "id": str(m["id"]),
            "kind": m["kind"],
            "title": Preview(m["title"]),
            "preview": Preview(clip_chars(one_line(m["head"]), PREVIEW_CHARS), 2),
            "chars": m["chars"],
            "supersedes": _id_or_none(m["supersedes_id"]),
            "created_at": rfc3339(m["created_at"]),
        }
        for m in rows
    ]


def _tasks(caller: Caller, limit: int) -> list[dict[str, Any]]:
    open_tasks = with_waiting(Task.objects.filter(project=caller.project, status__in=OPEN_STATUSES))
    rows = (
        open_tasks.annotate(next_head=Substr("next_step", 1, _HEAD))
        # Ready work first, oldest first; then the rest, most recently moved first.
        .order_by(
            F("ready").desc(),
            Case(When(ready=True, then="created_at")).asc(nulls_last=True),
            "-updated_at",
            "-id",
        )
        .values(
            "id",
            "title",
            "status",
            "version",
            "next_head",
            "blockers",
            "repository_ref",
            "ready",
            "waiting_ids",
            "updated_at",
            *LEASE_COLUMNS,
        )[:limit]
    )
    shown = WAITING_IDS if limit <= DEFAULT_LIMITS["task_limit"] else WAITING_IDS_BEYOND_DEFAULT
    now = timezone.now()
    return [{**_task(t, shown), "lease": _lease(t, caller, now)} for t in rows]


def _lease(t: dict[str, Any], caller: Caller, now: datetime) -> dict[str, Any] | None:
    """Who holds the task and until when; `expiring` flags the caller's own lease with under a
    third of its length left (renew it: task_heartbeat), `expired` one any claimer may take."""
    if lease_out(t) is None:
        return None
    left = (t["lease_expires_at"] - now).total_seconds()
    state = "live"
    if left <= 0:
        state = "expired"
    elif t["lease_actor"] == caller.actor.label and left < t["lease_seconds"] / 3:
        state = "expiring"
    return {
        "holder": {
            "actor": Preview(t["lease_actor"], 0.5),
            "session_ref": Preview(t["lease_session_ref"], 0.5),
        },
        "expires_at": rfc3339(t["lease_expires_at"]),
        "state": state,
    }


def _task(t: dict[str, Any], shown: int) -> dict[str, Any]:
    waiting = split_ids(t["waiting_ids"])
    return {
        "id": str(t["id"]),
        "title": Preview(t["title"]),
        "status": t["status"],
        "version": t["version"],
        "next_step": Preview(clip_chars(one_line(t["next_head"]), PREVIEW_CHARS), 1.5),
        "blocker_count": len(t["blockers"]),
        "repository_ref": _ref(t["repository_ref"]),
        "ready": bool(t["ready"]),
        "waiting_on_count": len(waiting),
        "waiting_on": waiting[:shown],
        "updated_at": rfc3339(t["updated_at"]),
    }


def _ref(ref: dict[str, Any] | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {
        "repository": Preview(ref["repository"], 0.5),
        "branch": None if ref.get("branch") is None else Preview(ref["branch"], 0.5),
        "commit": ref.get("commit"),
    }


def _receipts(caller: Caller, limit: int) -> list[dict[str, Any]]:
    rows = (
        WorkReceipt.objects.filter(project=caller.project)
        .annotate(summary_head=Substr("summary", 1, _HEAD))
        .order_by("-created_at", "-id")
        .values("id", "task_id", "session_ref", "summary_head", "tests", "commits", "created_at")[
            :limit
        ]
    )
    return [
        {
            "id": str(r["id"]),
            "task_id": str(r["task_id"]),
            "session_ref": Preview(r["session_ref"], 0.5),
            "summary": Preview(clip_chars(one_line(r["summary_head"]), PREVIEW_CHARS), 1.5),
            "tests": test_tally(r["tests"]),
            "commit_count": len(r["commits"]),
            "created_at": rfc3339(r["created_at"]),
        }
        for r in rows
    ]


def _state(caller: Caller, agent: str | None) -> dict[str, Any] | None:
    states = StateVersion.objects.filter(project=caller.project)
    # One agent's newest is its highest version, as state_get says: created_at comes from the
    # clock of whichever app server wrote the row. Across agents the time is all there is.
    newest_first: tuple[str, ...] = ("-created_at", "-id")
    if agent is not None:
        states, newest_first = states.filter(agent=agent), ("-version",)
    state = (
        states.annotate(head=Substr("body", 1, STATE_PREVIEW_CHARS + 1), chars=Length("body"))
        .order_by(*newest_first)
        .values("agent", "version", "head", "chars", "created_at")
        .first()
    )
    if state is None:
        return None
    return {
        "agent": state["agent"],
        "version": state["version"],
        # The summary keeps its lines: it is read as Markdown.
        "preview": Preview(clip_chars(state["head"], STATE_PREVIEW_CHARS), 6),
        "chars": state["chars"],
        "created_at": rfc3339(state["created_at"]),
    }


def _id_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def _counts(project: Project) -> tuple[dict[str, int], list[str]]:
    """Every count, each capped at COUNT_CAP, in one query.

    Exact counts would grow with the project (each is a scan of its rows); counting at most
    COUNT_CAP + 1 index entries per count keeps the recovery index's cost flat. Counts that
    reach the cap are reported by name; their value is the cap.
    """
    queries = {
        "memories": Memory.objects.filter(project=project),
        "decisions": Memory.objects.filter(project=project, kind=MemoryKind.DECISION),
        "notes": Memory.objects.filter(project=project, kind=MemoryKind.NOTE),
        "tasks": Task.objects.filter(project=project),
        "open_tasks": Task.objects.filter(project=project, status__in=OPEN_STATUSES),
        "ready_tasks": ready_tasks(project),
        "receipts": WorkReceipt.objects.filter(project=project),
        "repositories": ProjectRepository.objects.filter(project=project),
    }
    parts: list[str] = []
    params: list[Any] = []
    for name, rows in queries.items():
        sql, row_params = rows.order_by().values("pk")[: COUNT_CAP + 1].query.sql_with_params()
        # Only Django-compiled SQL and constant names go into the text; values are parameters.
        parts.append(f"(SELECT COUNT(*) FROM ({sql}) AS {name}_rows)")  # noqa: S608
        params.extend(row_params)
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts), params)
        row = cursor.fetchone()
    found = dict(zip(queries, row or (0,) * len(queries), strict=True))
    capped = [name for name, count in found.items() if count > COUNT_CAP]
    return {name: min(int(count), COUNT_CAP) for name, count in found.items()}, capped
