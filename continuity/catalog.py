"""The one operation table: every continuity operation, declared once for every transport.

Each row names the Operation (which carries its name, capability, input model, whether it
writes and whether it takes an idempotency key) and the model of its result, which mypy holds
to what the operation returns. The MCP tool table (continuity.mcp.tools) and the REST routes
(continuity.api.routes) are built from these rows and add only their own wording, so the two
transports cannot disagree about what an operation takes, returns or requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pydantic

from continuity import outputs, selectors, services
from continuity.outputs import Output
from continuity.selectors import lists
from core.access import Capability
from core.operations import Operation

OutputT = TypeVar("OutputT", bound=Output)


@dataclass(frozen=True)
class OperationSpec(Generic[OutputT]):
    operation: Operation[..., Any, OutputT]
    output_model: type[OutputT]
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


CATALOG: tuple[OperationSpec[Any], ...] = (
    OperationSpec(selectors.server_identity, outputs.IdentityOut),
    OperationSpec(selectors.continuity_context, outputs.ContextOut),
    OperationSpec(selectors.memory_get, outputs.MemoryGetOut),
    OperationSpec(selectors.memory_search, outputs.MemorySearchOut),
    OperationSpec(lists.memory_list, outputs.MemoryListOut, mcp=False),
    OperationSpec(selectors.task_get, outputs.TaskGetOut),
    OperationSpec(selectors.task_list, outputs.TaskListOut),
    OperationSpec(lists.receipt_list, outputs.ReceiptListOut, mcp=False),
    OperationSpec(selectors.state_get, outputs.StateGetOut),
    OperationSpec(services.memory_add, outputs.MemoryAckOut),
    OperationSpec(services.task_create, outputs.TaskAckOut),
    OperationSpec(services.task_update, outputs.TaskUpdateOut),
    OperationSpec(services.task_claim_next, outputs.TaskClaimOut),
    OperationSpec(services.task_heartbeat, outputs.TaskHeartbeatOut),
    # People end a stuck lease from the dashboard or over REST; agents never need to.
    OperationSpec(services.task_lease_release, outputs.TaskLeaseReleaseOut, mcp=False),
    OperationSpec(services.state_put, outputs.StateAckOut),
)

OPERATIONS: dict[str, OperationSpec[Any]] = {spec.name: spec for spec in CATALOG}
