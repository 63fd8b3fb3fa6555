"""Keeping a claimed task's lease alive while the session works, and letting it go at the end.

- `LeaseBook`: the leases this machine's sessions hold (state_dir()/leases.json): what `heyaira
  claim` and the hooks record, so that a later hook knows what to renew or release.
- `renew_due`: one pass of heartbeats for the leases of a session that are due (a third of the
  lease has gone by since the last one): what the hooks run on activity.
- `keep_lease`: for a bare SDK user, a background task that heartbeats one lease until the block
  ends, and says when the lease was lost.
The server's clock decides when a lease ends; the times kept here only say when to renew.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from heyaira_client.errors import ToolError
from heyaira_client.paths import state_dir, write_private

if TYPE_CHECKING:  # the MCP SDK loads only when a connection is made
    from heyaira_client.session import HeyAira

# A heartbeat is due once this share of the lease has gone by: two more chances before it ends.
RENEW_FRACTION = 1 / 3


class LeaseBook:
    """{session key: {task id: {"lease_seconds", "beat_at"}}}, one JSON file, replaced whole."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "leases.json"

    def _read(self) -> dict[str, dict[str, dict[str, float]]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        write_private(self.path, json.dumps({k: v for k, v in data.items() if v}, indent=1))

    @staticmethod
    def key(profile: str, session_ref: str) -> str:
        return f"{profile} {session_ref}"

    def held(self, profile: str, session_ref: str) -> dict[str, dict[str, float]]:
        return dict(self._read().get(self.key(profile, session_ref), {}))

    def record(self, profile: str, session_ref: str, task_id: str, lease_seconds: float) -> None:
        data = self._read()
        entry = {"lease_seconds": float(lease_seconds), "beat_at": time.time()}
        data.setdefault(self.key(profile, session_ref), {})[task_id] = entry
        self._write(data)

    def forget(self, profile: str, session_ref: str, task_id: str) -> None:
        data = self._read()
        data.get(self.key(profile, session_ref), {}).pop(task_id, None)
        self._write(data)

    def due(self, profile: str, session_ref: str, now: float | None = None) -> list[str]:
        now = time.time() if now is None else now
        return [
            task_id
            for task_id, lease in self.held(profile, session_ref).items()
            if now - lease["beat_at"] >= lease["lease_seconds"] * RENEW_FRACTION
        ]


def lease_length(lease: dict[str, Any] | None, default: float = 900.0) -> float:
    """The length of a lease the server answered with, from its expiry (server time) and now."""
    if not lease:
        return default
    expires = datetime.fromisoformat(str(lease["expires_at"]).replace("Z", "+00:00"))
    return max(1.0, (expires - datetime.now(UTC)).total_seconds())


@dataclass
class RenewPass:
    renewed: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)


async def renew_due(
    heyaira: HeyAira, book: LeaseBook, profile: str, session_ref: str, *, force: bool = False
) -> RenewPass:
    """Heartbeat the session's leases that are due (all of them with force); a lost one is
    dropped from the book."""
    done = RenewPass()
    held = book.held(profile, session_ref)
    tasks = list(held) if force else book.due(profile, session_ref)
    for task_id in tasks:
        try:
            await heyaira.task_heartbeat(task_id, session_ref=session_ref)
        except ToolError as error:
            if error.code not in ("lease_lost", "not_found"):
                raise
            book.forget(profile, session_ref, task_id)
            done.lost.append(task_id)
            continue
        book.record(profile, session_ref, task_id, held[task_id]["lease_seconds"])
        done.renewed.append(task_id)
    return done


@dataclass
class KeptLease:
    """What `keep_lease` tells the block it guards: heartbeats sent, and whether it was lost."""

    beats: int = 0
    lost: bool = False
    lost_event: anyio.Event = field(default_factory=anyio.Event)


@asynccontextmanager
async def keep_lease(
    heyaira: HeyAira, task_id: str, *, session_ref: str, every: float
) -> AsyncIterator[KeptLease]:
    """Heartbeat `task_id` every `every` seconds (a third of the lease, or less) while the block
    runs. If the lease is lost, `lost` is set and heartbeats stop: stop the work and read the
    task again. A heartbeat answered `unavailable`, or that got no answer, is tried again after
    a quarter of `every`; any other refusal waits for the next beat."""
    kept = KeptLease()

    async def beat() -> None:
        # A fixed cadence: a slow answer does not push the next beat back by its own length,
        # so a busy server eats into the lease's slack once, not twice.
        due = anyio.current_time() + every
        while True:
            await anyio.sleep_until(due)
            try:
                await heyaira.task_heartbeat(task_id, session_ref=session_ref)
            except ToolError as error:
                if error.code in ("lease_lost", "not_found"):
                    kept.lost = True
                    kept.lost_event.set()
                    return
                soon = error.code == "unavailable"
            except Exception:  # the answer never arrived: transport, protocol, timeout
                soon = True
            else:
                kept.beats += 1
                soon = False
            # A passing fault should not use up one of the lease's last chances.
            now = anyio.current_time()
            due = now + every / 4 if soon else max(due + every, now)

    async with anyio.create_task_group() as group:
        group.start_soon(beat)
        try:
            yield kept
        finally:
            group.cancel_scope.cancel()
