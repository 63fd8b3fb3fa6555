"""Leases on claimed tasks: who holds one, until when, and what another session may do.

A move to in_progress (task_claim_next, or task_update with status in_progress) takes a lease
for the claiming session: its holder is the caller's actor and the session_ref it names, and it
lasts `lease_seconds` (the project's default when the claim names none). The holder renews it
with task_heartbeat or any task_update; leaving in_progress ends it. While it is live, a write by
any other session is refused (lease_held). Once it has expired, task_claim_next (or a claiming
task_update) takes the task over: version + 1, audited as `lease_expired` with the old holder,
so the old holder's writes fail (stale_version, or lease_lost for its heartbeat). The server's
clock decides; nothing a client sends says what time it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from audit.models import Outcome
from audit.recorder import record
from continuity.models import TaskStatus
from core.access import Caller
from core.errors import ValidationError
from core.statements import Guard

# The columns that hold a lease, and their values when there is none.
NO_LEASE: dict[str, Any] = {
    "lease_actor": "",
    "lease_session_ref": "",
    "lease_seconds": None,
    "lease_expires_at": None,
}
LEASE_COLUMNS = tuple(NO_LEASE)


@dataclass(frozen=True)
class Holder:
    actor: str
    session_ref: str

    def holds(self, row: dict[str, Any]) -> bool:
        """Whether this session holds the lease of `row` (a task's lease columns), live or
        expired but not yet taken over. A lease claimed without a session_ref is the actor's,
        and a write that names no session is taken as the actor's own."""
        return (
            row["status"] == TaskStatus.IN_PROGRESS
            and row["lease_expires_at"] is not None
            and row["lease_actor"] == self.actor
            and (self.session_ref in ("", row["lease_session_ref"]) or not row["lease_session_ref"])
        )

    @property
    def sessions(self) -> list[str]:
        """The lease sessions this holder's heartbeat renews: its own, and a lease of its actor
        claimed without a session."""
        return [self.session_ref, ""] if self.session_ref else [""]

    @property
    def label(self) -> str:
        """How an audit row names the holder (target_id holds 128 characters)."""
        return f"{self.actor}#{self.session_ref}"[:128]


def holder_of(caller: Caller, session_ref: str | None) -> Holder:
    """The caller's session as a lease holder; a claim that names no session_ref is held by the
    actor alone (session_ref "")."""
    return Holder(actor=caller.actor.label, session_ref=session_ref or "")


def lease_length(caller: Caller, asked: int | None) -> int:
    """The lease a claim gets: `asked` within the bounds, else the project's default."""
    if asked is None:
        return int(caller.project.lease_seconds)
    floor = settings.HEYAIRA_LEASE_MIN_SECONDS
    if asked < floor:
        raise ValidationError(fields={"lease_seconds": f"should be at least {floor}"})
    return asked


def lease_values(holder: Holder, seconds: int, now: datetime) -> dict[str, Any]:
    return {
        "lease_actor": holder.actor,
        "lease_session_ref": holder.session_ref,
        "lease_seconds": seconds,
        "lease_expires_at": now + timedelta(seconds=seconds),
    }


def is_live(row: dict[str, Any], now: datetime) -> bool:
    expires = row["lease_expires_at"]
    return row["status"] == TaskStatus.IN_PROGRESS and expires is not None and expires > now


def free_or_held_by(holder: Holder) -> Guard:
    """The UPDATE condition of a write by `holder`: the task is not in progress, has no lease,
    or this session holds it. An expired lease of another session is not free: taking it over
    is a step of its own (audited), done where the lease's old values are known."""
    free = "status <> 'in_progress' OR lease_expires_at IS NULL"
    if not holder.session_ref:  # a write naming no session: the actor's own
        return Guard(f"({free} OR lease_actor = %s)", (("lease_actor", holder.actor),))
    return Guard(
        f"({free} OR (lease_actor = %s AND lease_session_ref IN (%s, '')))",
        (("lease_actor", holder.actor), ("lease_session_ref", holder.session_ref)),
    )


def record_holder(caller: Caller, note: str, row: dict[str, Any]) -> None:
    """An audit row naming a lease's holder when someone else ends it: `lease_expired` for a
    takeover, `lease_released` for a release. It is written in the operation's transaction,
    before the operation's own row."""
    holder = Holder(row["lease_actor"], row["lease_session_ref"])
    record(caller, note, Outcome.SUCCESS, target_type="lease_holder", target_id=holder.label)
