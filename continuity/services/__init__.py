"""Continuity services: the only code that changes memory, tasks, receipts and state."""

from continuity.services.claims import task_claim_next
from continuity.services.leases import task_heartbeat, task_lease_release
from continuity.services.memory import memory_add
from continuity.services.state import state_put
from continuity.services.tasks import task_create, task_update

__all__ = [
    "memory_add",
    "state_put",
    "task_claim_next",
    "task_create",
    "task_heartbeat",
    "task_lease_release",
    "task_update",
]
