"""The input shape of every continuity operation, validated once for every transport.

Both MCP (inputSchema) and REST use these models, so a bad input gets the same
`validation_error` with the same `fields` whichever way it arrives. Strings are checked for what
the database cannot store (NUL, unpaired surrogates), so no input reaches it as a 500.

The descriptions are what a model reads in tools/list: each says what the field is for and any
rule the schema a model sees does not state (continuity.mcp.schemas leaves out root-level
combinators and Python-checked patterns; the validators here enforce them all the same).
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, StrictInt, model_validator

from continuity.models import MAX_DEPENDENCIES, MEMORY_CONTENT_MAX, STATE_BODY_MAX
from core.errors import ValidationError
from core.validation import (
    NOT_BLANK_PATTERN,
    PRINTABLE_ID_PATTERN,
    SPACE_CLASS,
    BranchName,
    Input,
    RequiredText,
    SchemaPattern,
    Text,
)
from projects.models import LEASE_MAX_SECONDS, LEASE_MIN_SECONDS

IdempotencyKey = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        pattern=PRINTABLE_ID_PATTERN,
        description="A new UUID per write; a retry with it returns the first result.",
    ),
]
AgentName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$",
        description="The agent or harness the summary is for, e.g. 'codex'.",
    ),
]
# The largest version a PositiveIntegerField holds on every database: a larger expected_version
# is malformed input, not a stale one.
VERSION_MAX = 2_147_483_647
Version = Annotated[StrictInt, Field(le=VERSION_MAX)]
Blockers = Annotated[list[Annotated[RequiredText, Field(max_length=500)]], Field(max_length=20)]
BlockerList = Annotated[
    Blockers, Field(description="Open blockers, one short sentence each; [] clears them.")
]


class WriteContextInput(Input):
    # Copied verbatim from server_identity's write_context; compared field by field.
    resource: Annotated[Text, Field(max_length=300)]
    instance: Annotated[Text, Field(max_length=100)]
    project: Annotated[Text, Field(max_length=64)]


class WriteInput(Input):
    # server_identity's description and the instructions say where it comes from.
    write_context: WriteContextInput


RepositoryName = Annotated[
    str,
    Field(
        min_length=3,
        max_length=201,
        pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$",
        description="owner/name, bound to this project",
    ),
]


GitBranch = Annotated[BranchName, Field(max_length=200)]
CommitId = Annotated[str, Field(pattern=r"^[0-9a-f]{7,64}$")]


class RepositoryRefInput(Input):
    # Where the work lives in Git: a repository bound to this project, a branch, a commit.

    repository: RepositoryName
    branch: GitBranch | None = None
    commit: CommitId | None = None


class RepositoryRefChange(Input):
    # task_update's repository_ref: a new reference, or {} to clear it. The profile model APIs
    # share has no "this object or null", so the empty object says "none".
    model_config = ConfigDict(
        json_schema_extra={"description": "{repository, branch?, commit?}; {} clears it."}
    )

    repository: RepositoryName | None = None
    branch: GitBranch | None = None
    commit: CommitId | None = None

    @model_validator(mode="after")
    def _repository_or_nothing(self) -> RepositoryRefChange:
        if self.repository is None and (self.branch is not None or self.commit is not None):
            raise ValidationError(
                "A repository_ref names its repository (owner/name); send {} to clear it.",
                fields={"repository_ref.repository": "is required with a branch or a commit"},
            )
        return self


class TestRunInput(Input):
    name: Annotated[RequiredText, Field(max_length=300, description="The test or command run.")]
    result: Literal["passed", "failed", "skipped", "error"]


class WorkReceiptInput(Input):
    # Evidence of one session's work on a task; one per (task, session_ref).

    session_ref: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            pattern=PRINTABLE_ID_PATTERN,
            description="Your session's stable id; a second receipt with it is refused.",
        ),
    ]
    summary: Annotated[RequiredText, Field(max_length=4000, description="What was done.")]
    tests: Annotated[list[TestRunInput], Field(max_length=100)] = []
    commits: Annotated[list[CommitId], Field(max_length=100)] = []
    next_step: Annotated[Text, Field(max_length=2000)] = ""
    blockers: Blockers = []


# An opaque base64url cursor from next_cursor ("" is none).
Cursor = Annotated[
    str,
    Field(max_length=200, description="Opaque: the previous page's next_cursor, as given."),
    SchemaPattern(r"^[A-Za-z0-9_-]*$"),
]


# --- memory -------------------------------------------------------------------------------


class MemoryAddInput(WriteInput):
    # The model validator below, as JSON Schema can say it (REST's OpenAPI document shows it;
    # MCP tool schemas leave root combinators out and the descriptions state the rule).
    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"kind": {"const": "decision"}}},
            "then": {
                "required": ["rationale", "source"],
                "properties": {
                    "rationale": {"pattern": NOT_BLANK_PATTERN},
                    "source": {"pattern": NOT_BLANK_PATTERN},
                },
            },
            "else": {"not": {"required": ["supersedes"]}},
        }
    )

    kind: Literal["decision", "note"]
    content: Annotated[RequiredText, Field(max_length=MEMORY_CONTENT_MAX)]
    title: Annotated[Text, Field(max_length=200)] = ""
    rationale: Annotated[
        Text, Field(max_length=4000, description="Why; required for a decision.")
    ] = ""
    source: Annotated[
        Text,
        Field(
            max_length=500,
            description="Where it was decided (URL, issue, commit, 'user in session'); "
            "required for a decision.",
        ),
    ] = ""
    supersedes: Annotated[uuid.UUID | None, Field(description="A decision this one replaces.")] = (
        None
    )
    idempotency_key: IdempotencyKey | None = None

    @model_validator(mode="after")
    def _decisions_need_rationale_and_source(self) -> MemoryAddInput:
        # Our ValidationError (not a ValueError) passes through pydantic with its own fields.
        if self.kind == "decision":
            missing = {
                name: "is required for a decision"
                for name in ("rationale", "source")
                if not getattr(self, name).strip()
            }
            if missing:
                raise ValidationError(
                    "A decision needs rationale (why) and source (where it was decided): send "
                    f"{' and '.join(missing)}, or record it as kind 'note'.",
                    fields=missing,
                )
        elif self.supersedes is not None:
            raise ValidationError(
                "Only a decision can supersede another: leave supersedes out of a note.",
                fields={"supersedes": "only a decision can supersede another"},
            )
        return self


class MemoryGetInput(Input):
    memory_id: uuid.UUID


class MemoryListInput(Input):
    kind: Literal["decision", "note"] | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=100)] = 20
    cursor: Cursor | None = None


class MemorySearchInput(Input):
    query: Annotated[RequiredText, Field(max_length=200)]
    kind: Literal["decision", "note"] | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=50)] = 10


# --- tasks --------------------------------------------------------------------------------

OpenStatus = Literal["todo", "in_progress", "blocked"]
AnyStatus = Literal["todo", "in_progress", "blocked", "done", "cancelled"]
BlockedBy = Annotated[
    list[uuid.UUID],
    Field(
        max_length=MAX_DEPENDENCIES,
        description="Tasks to finish first; the whole set ([] clears it).",
    ),
]


# The claiming session: the lease's holder beside the actor (continuity.leases).
SessionRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        pattern=PRINTABLE_ID_PATTERN,
        description="Your session's stable id; it holds the lease.",
    ),
]


def whole_number(value: object) -> object:
    """A float with no fraction as the int it is; anything else as given (StrictInt judges)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# The schema states the pinned floor; the server checks its own (HEYAIRA_LEASE_MIN_SECONDS,
# lowered only by test servers), so the Python bound is the smallest it may be.
LeaseSeconds = Annotated[
    StrictInt,
    Field(
        ge=1,
        le=LEASE_MAX_SECONDS,
        json_schema_extra={"minimum": LEASE_MIN_SECONDS},
        description="Lease length; default: the project's.",
    ),
    # JSON Schema's integer includes 286.0; a JSON client may send a whole number that way.
    BeforeValidator(whole_number),
]


class TaskCreateInput(WriteInput):
    title: Annotated[RequiredText, Field(max_length=200)]
    description: Annotated[
        RequiredText,
        Field(max_length=8000, description="The stable goal and acceptance boundary."),
    ]
    status: OpenStatus = "todo"
    next_step: Annotated[Text, Field(max_length=2000)] = ""
    repository_ref: RepositoryRefInput | None = None
    blocked_by: BlockedBy = []
    idempotency_key: IdempotencyKey | None = None


class TaskGetInput(Input):
    task_id: uuid.UUID


class TaskListInput(Input):
    # One Literal, not a union of two: a union's errors name its members ("status.literal[...]")
    # where a client must see the field ("status").
    status: Literal[AnyStatus, "open", "ready"] | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=100)] = 20
    cursor: Cursor | None = None


class ReceiptListInput(Input):
    task_id: uuid.UUID
    limit: Annotated[StrictInt, Field(ge=1, le=50)] = 20
    cursor: Cursor | None = None


# task_update's "changes something" rule, as JSON Schema can say it (shown in REST's OpenAPI
# document; MCP tool schemas leave root combinators out and the tool description states it).
_SOME_CHANGE: dict[str, Any] = {
    "anyOf": [
        {"required": [name], "properties": {name: {"type": kind}}}
        for name, kind in (
            ("status", "string"),
            ("next_step", "string"),
            ("blockers", "array"),
            ("blocked_by", "array"),
            ("handoff_note", "string"),
            ("repository_ref", "object"),
            ("work_receipt", "object"),
        )
    ]
}


NOTHING_TO_UPDATE = (
    "nothing to update: give at least one of status, next_step, blockers, blocked_by, "
    "handoff_note, repository_ref or work_receipt (a null is no change)"
)


# What says who writes and against which version, not what changes.
UPDATE_CONTEXT = frozenset(
    {"write_context", "task_id", "expected_version", "session_ref", "lease_seconds"}
)


class TaskUpdateInput(WriteInput):
    model_config = ConfigDict(json_schema_extra=_SOME_CHANGE)

    task_id: uuid.UUID
    expected_version: Annotated[Version, Field(ge=1)]
    status: AnyStatus | None = None
    next_step: Annotated[Text, Field(max_length=2000)] | None = None
    blockers: BlockerList | None = None
    handoff_note: Annotated[Text, Field(max_length=4000)] | None = None
    repository_ref: RepositoryRefChange | None = None
    blocked_by: BlockedBy | None = None
    work_receipt: WorkReceiptInput | None = None
    session_ref: SessionRef | None = None
    lease_seconds: LeaseSeconds | None = None

    @model_validator(mode="after")
    def _changes_something(self) -> TaskUpdateInput:
        # A null is no change (clients often send every optional field); an explicit value
        # clears ("" for a text, [] for a list, {} for repository_ref). Who writes (session_ref)
        # and for how long a lease lasts change nothing by themselves: task_heartbeat renews a
        # lease.
        changes = {
            name
            for name in self.model_fields_set - UPDATE_CONTEXT
            if getattr(self, name) is not None
        }
        if not changes:
            message = f"{NOTHING_TO_UPDATE[0].upper()}{NOTHING_TO_UPDATE[1:]}."
            raise ValidationError(message, fields={"arguments": NOTHING_TO_UPDATE})
        return self


class TaskClaimNextInput(WriteInput):
    session_ref: SessionRef | None = None
    lease_seconds: LeaseSeconds | None = None
    idempotency_key: IdempotencyKey | None = None


class TaskHeartbeatInput(WriteInput):
    task_id: uuid.UUID
    session_ref: SessionRef


class TaskLeaseReleaseInput(Input):
    task_id: uuid.UUID


# --- state and context --------------------------------------------------------------------


class StatePutInput(WriteInput):
    agent: AgentName
    # continuity.state_blocks' shape rules as a pattern (the heading line, then some text);
    # what no schema can say (no refusal, STATE_BODY_MAX once closing chatter is cut) it checks.
    body: Annotated[
        Text,
        Field(
            min_length=1,
            max_length=STATE_BODY_MAX * 2,
            description="Markdown that starts with the line '# Running summary' (goal, done, "
            f"pending, user preferences), at most {STATE_BODY_MAX:,} characters.",
        ),
        SchemaPattern(
            rf"^\ufeff*[{SPACE_CLASS}]*# Running summary[^\n\x00]*\n"
            rf"[^\x00]*[^{SPACE_CLASS}\x00][^\x00]*$"
        ),
    ]
    expected_version: Annotated[Version, Field(ge=0)] | None = None


class StateGetInput(Input):
    agent: AgentName


# Larger asks than the caps are clamped and reported; absurd ones are refused outright.
ContextLimit = Annotated[StrictInt, Field(ge=0, le=1_000_000)]


class ContinuityContextInput(Input):
    memory_limit: ContextLimit = 10
    task_limit: ContextLimit = 20
    receipt_limit: ContextLimit = 10
    agent: AgentName | None = None


class NoInput(Input):
    pass
