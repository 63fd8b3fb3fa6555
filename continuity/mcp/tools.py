"""The pinned MCP tools: the operation table's rows, in MCP wording.

Descriptions are written for a model reading tools/list: what the tool is for in the recovery
protocol, when to call it, and the rules its inputSchema cannot state, in a sentence or three;
what each error code asks of the agent is said once, in INSTRUCTIONS. Each tool's schemas are
generated from its input and output models (continuity.mcp.schemas). What a model reads of
tools/list (name, description, inputSchema and _meta) stays within 12,000 bytes, with room for
the tools still to come (tests/continuity/mcp/test_tool_schema_portability.py pins it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types

from continuity.catalog import OPERATIONS, OperationSpec
from continuity.mcp import schemas
from core.operations import Operation

# The server's instructions: at session start a client that loads tools lazily (Claude Code)
# shows the model these and the tool names alone, so they say which tools to call in which
# order and with which arguments. Claude Code cuts instructions at 2,048 characters: the order
# of a session comes first (tests/continuity/mcp/test_tool_schema_portability.py keeps it
# within the limit).
INSTRUCTIONS = (
    "HeyAira keeps this project's decisions, tasks, handoffs and work receipts across sessions. "
    "Start every session: "
    "1) server_identity: check resource, instance and project against the profile you expect; "
    "if they differ, stop and tell the user. Copy its write_context into every write. "
    "2) continuity_context, once: newest decisions and notes, open tasks with version and "
    "next_step, recent receipts, the running summary. "
    "3) task_claim_next(write_context, session_ref) claims the next ready task; or task_get it "
    "and task_update(write_context, task_id, expected_version=<the version read>, "
    "status='in_progress', session_ref). session_ref: one stable id for this session. A claim "
    "holds a lease: task_heartbeat(write_context, task_id, session_ref) every third of "
    "lease_seconds, or the task goes to another session. "
    "4) Work in Git. Record accepted decisions with memory_add(kind='decision', content, "
    "rationale, source); find earlier ones with memory_search(query). "
    "5) Before you stop: task_update with next_step, handoff_note and work_receipt "
    "{session_ref, summary, tests, commits}. "
    "Give memory_add and task_create an idempotency_key (a new UUID) so a retry never "
    "duplicates. If your client loads tools on demand, load each by name before its first call. "
    "A refused call is a result with isError and error.code: "
    "stale_version: task_get it again, redo your change on error.current_version; "
    "validation_error: fix the arguments error.fields names; "
    "write_context_mismatch: copy write_context from server_identity again; "
    "invalid_transition: choose a status from error.allowed; "
    "lease_held: another session holds the task until error.lease.expires_at; take another; "
    "lease_lost: your lease ended; stop work on the task and read it again; "
    "forbidden: your role or credential does not allow it; tell the user; "
    "not_found, duplicate_receipt, idempotency_conflict: as error.message says; "
    "unavailable: nothing was done; retry after error.retry_after seconds."
)
# Claude Code reads it: these tools stay loaded where the others wait for a tool search, since a
# session needs them on its first turn.
ALWAYS_LOAD = {"anthropic/alwaysLoad": True}


@dataclass(frozen=True)
class ToolSpec:
    """A row of the operation table (`spec`: its operation, input and output models), in MCP
    wording."""

    spec: OperationSpec
    description: str
    title: str
    first_turn: bool = False  # needed on a session's first turn: ALWAYS_LOAD

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
            meta=dict(ALWAYS_LOAD) if self.first_turn else None,
        )


SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        OPERATIONS["server_identity"],
        "Call first. Who this server is and who you are here: compare resource, instance and "
        "project with the profile you expect. Copy its write_context into every write.",
        "Server identity",
        first_turn=True,
    ),
    ToolSpec(
        OPERATIONS["continuity_context"],
        "Call once after server_identity: this project's recovery index (newest decisions and "
        "notes, open tasks with version and next_step, recent receipts, running summary). Read "
        "more with memory_get and task_get.",
        "Continuity context",
        first_turn=True,
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
        "(on stale_version, task_get it again). Give at least one change; leave out what stays "
        "(a null is no change); '', [] and {} clear. done and cancelled are final. in_progress "
        "takes a lease for session_ref; leaving it ends the lease. End your session with a "
        "work_receipt, one per session_ref.",
        "Update task",
    ),
    ToolSpec(
        OPERATIONS["task_claim_next"],
        "Claim a task with a lease for session_ref: one whose lease expired, else the oldest "
        "ready (todo, every blocked_by task done). It comes back in_progress with its new "
        "version; task is null when none.",
        "Claim next task",
        first_turn=True,
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
