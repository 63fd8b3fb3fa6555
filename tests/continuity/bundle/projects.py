"""A project holding every record type, made through the services so that audit rows exist."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from audit.models import AuditEvent, Outcome
from audit.recorder import SecurityContext, record_security_event
from continuity.services import state_put
from core.access import Caller
from projects.models import Project
from tests.continuity.helpers import add_decision, add_note, new_task, receipt, update_task
from tests.factories import wc

SUMMARY = "# Running summary\n\n## Goal\nShip the export.\n\n## Done\n- {n} things\n"


def fill(
    caller: Caller,
    *,
    memories: int = 100,
    tasks: int = 50,
    audit_events: int = 1000,
) -> None:
    """memories (every fifth decision superseding the one before), tasks each blocked by the
    one before (some done, with receipts, some held under a lease), two agents' running
    summaries, and security events up to `audit_events` in the project's chain."""
    previous: dict[str, Any] | None = None
    for n in range(memories):
        if n % 5 == 4 and previous is not None:
            previous = add_decision(caller, f"Decision {n}", supersedes=previous["id"])
        elif n % 5 == 3:
            previous = add_decision(caller, f'Decision {n}: ünïcode ✓ "quoted"\nnew line')
        else:
            add_note(caller, f"Note {n}", title=f"note {n}")
    made: list[dict[str, Any]] = []
    for n in range(tasks):
        blocked_by = [made[-1]["id"]] if made and n % 2 else []
        task = (
            new_task(caller, f"Task {n}", blocked_by=blocked_by)
            if blocked_by
            else new_task(caller, f"Task {n}")
        )
        if n % 3 == 0 and not blocked_by:
            task = update_task(caller, task, status="in_progress", next_step="write it")["task"]
            task = update_task(
                caller,
                task,
                status="done",
                handoff_note="done and tested",
                work_receipt=receipt(
                    f"session-{n}",
                    tests=[{"name": "pytest -q", "result": "passed"}],
                    commits=["a" * 40],
                ),
            )["task"]
        elif n % 3 == 2 and not blocked_by:
            # A claim that still holds its lease at the export.
            task = update_task(
                caller, task, status="in_progress", session_ref=f"agent-{n}", lease_seconds=600
            )["task"]
        made.append(task)
    for agent in ("claude", "codex"):
        for n in range(3):
            state_put(caller, write_context=wc(caller), agent=agent, body=SUMMARY.format(n=n))
    pad_audit(caller.project, audit_events)


def pad_audit(project: Project, total: int) -> None:
    """Security events in the project's chain until it holds `total` events."""
    have = AuditEvent.objects.filter(project_id=project.pk).count()
    context = SecurityContext(instance=settings.HEYAIRA_INSTANCE, request_id="pad")
    for _ in range(max(0, total - have)):
        record_security_event("sign_in", Outcome.REJECTED, context, project=project,
                              error_code="unauthenticated")  # fmt: skip
