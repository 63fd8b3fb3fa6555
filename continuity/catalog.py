"""The one operation table: every continuity operation, declared once for every transport.

Each row names the Operation (which carries its name, capability, input model and whether it
writes), the typed model of its result, whether it takes an idempotency key, and the type of the
object its audit row targets. The MCP tool table (continuity.mcp.tools) and the REST routes
(continuity.api.routes) are built from these rows and add only their own wording, so the two
transports cannot disagree about what an operation takes, returns or requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic

from continuity import outputs, selectors, services
from continuity.selectors import lists
from core.access import Capability
from core.operations import Operation


@dataclass(frozen=True)
class OperationSpec:
    operation: Operation[Any, Any]
    output_model: type[pydantic.BaseModel]
    target_type: str
    # Offered as an MCP tool; the REST-only reads are the pages MCP reaches through
    # continuity_context and task_get.
    mcp: bool = True

    @property
    def name(self) -> str:
        return self.operation.name

    @property
    def capability(self) -> Capability:
        return self.operation.capability

    @property
    def input_model(self) -> type[pydantic.BaseModel]:
        return self.operation.input_model

    @property
    def writes(self) -> bool:
        return self.operation.writes

    @property
    def idempotent(self) -> bool:
        """Takes an idempotency_key: an append that a retry must not repeat."""
        return self.operation.once is not None


CATALOG: tuple[OperationSpec, ...] = (
    OperationSpec(selectors.server_identity, outputs.IdentityOut, "project"),
    OperationSpec(selectors.continuity_context, outputs.ContextOut, "project"),
    OperationSpec(selectors.memory_get, outputs.MemoryGetOut, "memory"),
    OperationSpec(selectors.memory_search, outputs.MemorySearchOut, ""),
    OperationSpec(lists.memory_list, outputs.MemoryListOut, "", mcp=False),
    OperationSpec(selectors.task_get, outputs.TaskGetOut, "task"),
    OperationSpec(selectors.task_list, outputs.TaskListOut, ""),
    OperationSpec(lists.receipt_list, outputs.ReceiptListOut, "task", mcp=False),
    OperationSpec(selectors.state_get, outputs.StateGetOut, "state"),
    OperationSpec(services.memory_add, outputs.MemoryAckOut, "memory"),
    OperationSpec(services.task_create, outputs.TaskAckOut, "task"),
    OperationSpec(services.task_update, outputs.TaskUpdateOut, "task"),
    OperationSpec(services.task_claim_next, outputs.TaskClaimOut, "task"),
    OperationSpec(services.task_heartbeat, outputs.TaskHeartbeatOut, "task"),
    # People end a stuck lease from the dashboard or over REST; agents never need to.
    OperationSpec(services.task_lease_release, outputs.TaskLeaseReleaseOut, "task", mcp=False),
    OperationSpec(services.state_put, outputs.StateAckOut, "state"),
)

OPERATIONS: dict[str, OperationSpec] = {spec.name: spec for spec in CATALOG}
