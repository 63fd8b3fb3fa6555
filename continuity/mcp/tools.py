"""The pinned MCP tools: the operation table's rows, in MCP wording.

Descriptions are written for a model reading tools/list: what the tool is for in the recovery
protocol, when to call it, and the rules its inputSchema cannot state, in a sentence or three;
what each error code asks of the agent is said once, in INSTRUCTIONS. Each tool's schemas are
generated from its input and output models (continuity.mcp.schemas). What a model reads of
tools/list (name, description and inputSchema) stays within 12,000 bytes, with room for the
tools still to come (tests/mcp/test_tool_schema_portability.py pins it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types

from continuity.catalog import OPERATIONS, OperationSpec
from continuity.mcp import schemas
from core.operations import Operation

INSTRUCTIONS = (
    "HeyAira keeps this project's decisions, tasks, handoffs and work receipts across sessions. "
    "Start every session like this: "
    "1) server_identity: check resource, instance and project against the profile you expect; "
    "if they differ, stop and tell the user. "
    "2) continuity_context, once: the newest decisions and notes, open tasks with their version "
    "and next step, recent receipts and the running summary. "
    "3) task_get the task you will work on, then claim it: task_update(status='in_progress', "
    "expected_version=<the version you read>, session_ref). Or take the next task with "
    "task_claim_next(session_ref). A claim holds a lease (lease_seconds, default the project's): "
    "call task_heartbeat every third of it while you work, or the task goes to another session. "
    "4) Work in Git. Record accepted decisions with memory_add(kind='decision', rationale, "
    "source). "
    "5) Hand over before you stop: task_update with next_step, blockers, handoff_note and "
    "work_receipt {session_ref, summary, tests, commits}. "
    "Every write takes write_context copied from server_identity; give memory_add and "
    "task_create an idempotency_key so a retry never duplicates. "
    "A refused call is a result with isError and error.code; what to do next: "
    "stale_version: someone changed it since you read it; read it again (task_get), redo your "
    "change on error.current_version; "
    "validation_error: fix the arguments error.fields names, as its messages say; "
    "write_context_mismatch: call server_identity and copy its write_context; "
    "invalid_transition: choose a status from error.allowed; "
    "not_found: no such id in this project; "
    "duplicate_receipt: this session already left its receipt on this task; "
    "idempotency_conflict: that key went with other arguments; use a new key for a new write; "
    "forbidden: your role or credential does not allow it; tell the user; "
    "lease_held: another session holds the task until error.lease.expires_at; take another; "
    "lease_lost: your lease ended and the task moved on; stop work on it and read it again; "
    "unavailable: nothing was done; retry after error.retry_after seconds."
)


@dataclass(frozen=True)
class ToolSpec:
    """A row of the operation table (`spec`: its operation, input and output models), in MCP
    wording."""

    spec: OperationSpec
    description: str
    title: str

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def operation(self) -> Operation[..., Any, Any]:
        return self.spec.operation

    def as_tool(self) -> types.Tool:
        read_only = not self.spec.writes
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=schemas.input_schema(self.spec.input_model),
            output_schema=schemas.output_schema(self.spec.output_model),
            annotations=types.ToolAnnotations(
                read_only_hint=read_only,
                destructive_hint=False,
                # Retries are safe for reads, and for appends that carry an idempotency_key.
                idempotent_hint=read_only,
                open_world_hint=False,
            ),
        )


SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        OPERATIONS["server_identity"],
        "Call first. Who this server is and who you are here: compare resource, instance and "
        "project with the profile you expect. Copy its write_context into every write.",
        "Server identity",
    ),
    ToolSpec(
        OPERATIONS["continuity_context"],
        "Call once after server_identity: this project's recovery index (newest decisions and "
        "notes, open tasks with version and next_step, recent receipts, running summary). Read "
        "more with memory_get and task_get.",
        "Continuity context",
    ),
    ToolSpec(
        OPERATIONS["memory_get"],
        "One decision or note in full, with what superseded it.",
        "Get memory",
    ),
    ToolSpec(
        OPERATIONS["memory_search"],
        "Full-text search over decisions and notes, best matches first.",
        "Search memory",
    ),
    ToolSpec(
        OPERATIONS["task_get"],
        "One task in full (goal, handoff, version) with its recent work receipts. Read it "
        "before you update it: task_update needs its version.",
        "Get task",
    ),
    ToolSpec(
        OPERATIONS["task_list"],
        "Tasks, newest first. status 'open': todo, in_progress or blocked; 'ready': todo with "
        "every blocked_by task done.",
        "List tasks",
    ),
    ToolSpec(
        OPERATIONS["state_get"],
        "The newest running summary of an agent.",
        "Get running summary",
    ),
    ToolSpec(
        OPERATIONS["memory_add"],
        "Record an accepted decision (rationale and source required) or a durable note. "
        "Memories never change; a new decision may supersede an old one.",
        "Add memory",
    ),
    ToolSpec(
        OPERATIONS["task_create"],
        "Create a task; title and description are its stable goal and acceptance boundary.",
        "Create task",
    ),
    ToolSpec(
        OPERATIONS["task_update"],
        "Claim, hand over or finish a task, atomically. expected_version: the version you read "
        "(on stale_version, task_get it again). Give at least one change; a null is no change, "
        "but repository_ref null clears it. done and cancelled are final. in_progress takes a "
        "lease for session_ref; leaving it ends the lease. End your session with a work_receipt, "
        "one per session_ref.",
        "Update task",
    ),
    ToolSpec(
        OPERATIONS["task_claim_next"],
        "Claim a task with a lease for session_ref: one whose lease expired, else the oldest "
        "ready (todo, every blocked_by task done). It comes back in_progress with its new "
        "version; task is null when none.",
        "Claim next task",
    ),
    ToolSpec(
        OPERATIONS["task_heartbeat"],
        "Renew your lease on a task you claimed; call it every third of lease_seconds while you "
        "work. The version stays.",
        "Renew lease",
    ),
    ToolSpec(
        OPERATIONS["state_put"],
        "Store a new version of your running summary. expected_version: the version you read "
        "(0 for the first; leave it out to append).",
        "Put running summary",
    ),
)

TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in SPECS}
