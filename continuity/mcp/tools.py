"""The pinned MCP tools (DESIGN section 5): the operation table's rows, in MCP wording.

Descriptions are written for a model reading tools/list: what the tool is for in the recovery
protocol, in a sentence or two. Each tool's schemas are generated from its input and output
models (continuity.mcp.schemas); the whole tools/list result stays under 38,000 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic

from continuity.catalog import OPERATIONS, OperationSpec
from continuity.mcp import schemas
from core.access import Capability
from core.operations import Operation

INSTRUCTIONS = (
    "HeyAira keeps this project's decisions, tasks, handoffs and work receipts across sessions. "
    "Start every session like this: "
    "1) server_identity: check resource, instance and project against the profile you expect; "
    "if they differ, stop and tell the user. "
    "2) continuity_context, once: the newest decisions and notes, open tasks with their version "
    "and next step, recent receipts and the running summary. "
    "3) task_get the task you will work on, then claim it: task_update(status='in_progress', "
    "expected_version=<the version you read>). On stale_version someone else moved it: read it "
    "again. Or take the oldest ready task (every blocked_by task done) with task_claim_next. "
    "4) Work in Git. Record accepted decisions with memory_add(kind='decision', rationale, "
    "source). "
    "5) Hand over before you stop: task_update with next_step, blockers, handoff_note and "
    "work_receipt {session_ref, summary, tests, commits}. "
    "Every write takes write_context copied from server_identity; give memory_add and "
    "task_create an idempotency_key so a retry never duplicates."
)


@dataclass(frozen=True)
class ToolSpec:
    spec: OperationSpec
    description: str
    title: str

    @property
    def operation(self) -> Operation[Any, Any]:
        return self.spec.operation

    @property
    def input_model(self) -> type[pydantic.BaseModel]:
        return self.spec.input_model

    @property
    def output_model(self) -> type[pydantic.BaseModel]:
        return self.spec.output_model

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def capability(self) -> Capability:
        return self.operation.capability

    @property
    def read_only(self) -> bool:
        return not self.operation.writes

    def as_tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=schemas.input_schema(self.input_model),
            output_schema=schemas.output_schema(self.output_model),
            annotations=types.ToolAnnotations(
                read_only_hint=self.read_only,
                destructive_hint=False,
                # Retries are safe for reads, and for appends that carry an idempotency_key.
                idempotent_hint=self.read_only,
                open_world_hint=False,
            ),
        )


SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        OPERATIONS["server_identity"],
        "Call first. Who this server is and who you are here; compare resource, instance and "
        "project with your expected profile. Copy write_context into every write.",
        "Server identity",
    ),
    ToolSpec(
        OPERATIONS["continuity_context"],
        "Call once after server_identity: the bounded recovery index of this project (newest "
        "decisions and notes, open tasks with version and next_step, recent receipts, running "
        "summary). Follow ids with memory_get and task_get.",
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
        "before you claim or update it.",
        "Get task",
    ),
    ToolSpec(
        OPERATIONS["task_list"],
        "Tasks, newest first. status='open' means todo, in_progress or blocked; 'ready': todo, "
        "blocked_by all done. Pass next_cursor back as cursor for the next page.",
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
        "Memories never change; a new decision may supersede an old one. Send an "
        "idempotency_key: a retry then returns the first result.",
        "Add memory",
    ),
    ToolSpec(
        OPERATIONS["task_create"],
        "Create a task. title and description are its stable goal and acceptance boundary. "
        "Send an idempotency_key.",
        "Create task",
    ),
    ToolSpec(
        OPERATIONS["task_update"],
        "Claim, hand over or finish a task, atomically. expected_version must be the version "
        "you read (stale_version: re-read). Statuses: todo, in_progress, blocked, done, "
        "cancelled. End your session with work_receipt {session_ref, summary, tests, commits}; "
        "one receipt per session.",
        "Update task",
    ),
    ToolSpec(
        OPERATIONS["task_claim_next"],
        "Claim the oldest ready task (todo, every blocked_by task done): it comes back "
        "in_progress with its new version; task is null when none is ready.",
        "Claim next ready task",
    ),
    ToolSpec(
        OPERATIONS["state_put"],
        "Store a new version of your running summary: Markdown starting with "
        "'# Running summary' (goal, done, pending, user preferences), at most 12,000 characters.",
        "Put running summary",
    ),
)

TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in SPECS}
