"""Typed views of the server's results (the server's docs/tools.md). Each keeps the JSON it came
from in `raw`, so a field the server adds later is never lost on the way through.

Each field is named as the server's result names it, and tests/client/test_result_models.py
holds every one to the server's output schemas (the name, the JSON type, and parsing results
generated from those schemas), so a field the server renames or drops fails there instead of
reading as an empty default here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProjectRef:
    id: str
    slug: str
    name: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> ProjectRef:
        return cls(id=str(data["id"]), slug=str(data["slug"]), name=str(data["name"]))


@dataclass(frozen=True)
class WriteContext:
    resource: str
    instance: str
    project: str

    def as_json(self) -> dict[str, str]:
        return {"resource": self.resource, "instance": self.instance, "project": self.project}


@dataclass(frozen=True)
class Principal:
    actor: str
    role: str
    scopes: tuple[str, ...]
    credential: str


@dataclass(frozen=True)
class Identity:
    resource: str
    instance: str
    project: ProjectRef
    principal: Principal
    write_context: WriteContext
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Identity:
        principal = data["principal"]
        return cls(
            resource=str(data["resource"]),
            instance=str(data["instance"]),
            project=ProjectRef.of(data["project"]),
            principal=Principal(
                actor=str(principal["actor"]),
                role=str(principal["role"]),
                scopes=tuple(principal.get("scopes", ())),
                credential=str(principal.get("credential", "")),
            ),
            write_context=WriteContext(**{k: str(v) for k, v in data["write_context"].items()}),
            raw=data,
        )


@dataclass(frozen=True)
class MemoryPreview:
    id: str
    kind: str
    title: str
    preview: str
    created_at: str


@dataclass(frozen=True)
class TaskSummary:
    id: str
    title: str
    status: str
    version: int
    next_step: str
    blocker_count: int
    # Readiness: todo with every blocked_by task done; else the open dependencies (their
    # number, and the first few ids) it waits on.
    ready: bool = False
    waiting_on_count: int = 0
    waiting_on: tuple[str, ...] = ()
    # In progress: who holds its lease and until when (server time); state is live, expiring
    # (yours, under a third left) or expired (task_claim_next takes it over).
    lease: dict[str, Any] | None = None


@dataclass(frozen=True)
class ReceiptSummary:
    id: str
    task_id: str
    session_ref: str
    summary: str
    created_at: str


@dataclass(frozen=True)
class StatePreview:
    agent: str
    version: int
    preview: str
    created_at: str


@dataclass(frozen=True)
class Context:
    """continuity_context: the bounded recovery index."""

    project: ProjectRef
    memories: tuple[MemoryPreview, ...]
    tasks: tuple[TaskSummary, ...]
    receipts: tuple[ReceiptSummary, ...]
    state: StatePreview | None
    counts: dict[str, int]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Context:
        state = data.get("state")
        return cls(
            project=ProjectRef.of(data["project"]),
            memories=tuple(
                MemoryPreview(
                    id=m["id"],
                    kind=m["kind"],
                    title=m.get("title") or "",
                    preview=m.get("preview") or "",
                    created_at=m.get("created_at", ""),
                )
                for m in data.get("memories", [])
            ),
            tasks=tuple(
                TaskSummary(
                    id=t["id"],
                    title=t["title"],
                    status=t["status"],
                    version=int(t["version"]),
                    next_step=t.get("next_step") or "",
                    blocker_count=int(t.get("blocker_count") or 0),
                    ready=bool(t.get("ready")),
                    waiting_on_count=int(t.get("waiting_on_count") or 0),
                    waiting_on=tuple(str(i) for i in t.get("waiting_on") or ()),
                    lease=t.get("lease"),
                )
                for t in data.get("tasks", [])
            ),
            receipts=tuple(
                ReceiptSummary(
                    id=r["id"],
                    task_id=r["task_id"],
                    session_ref=r["session_ref"],
                    summary=r.get("summary") or "",
                    created_at=r.get("created_at", ""),
                )
                for r in data.get("receipts", [])
            ),
            state=StatePreview(
                agent=state["agent"],
                version=int(state["version"]),
                preview=state.get("preview") or "",
                created_at=state.get("created_at", ""),
            )
            if state
            else None,
            counts={k: int(v) for k, v in data.get("counts", {}).items()},
            raw=data,
        )


@dataclass(frozen=True)
class Recovery:
    """What recover() returns: the verified identity, then the recovery index."""

    identity: Identity
    context: Context


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    description: str
    status: str
    version: int
    next_step: str
    blockers: tuple[str, ...]
    handoff_note: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Task:
        return cls(
            id=data["id"],
            title=data["title"],
            description=data.get("description", ""),
            status=data["status"],
            version=int(data["version"]),
            next_step=data.get("next_step") or "",
            blockers=tuple(data.get("blockers") or ()),
            handoff_note=data.get("handoff_note") or "",
            raw=data,
        )


@dataclass(frozen=True)
class Receipt:
    id: str
    task_id: str
    session_ref: str
    summary: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Receipt:
        return cls(
            id=data["id"],
            task_id=data["task_id"],
            session_ref=data["session_ref"],
            summary=data.get("summary", ""),
            raw=data,
        )


@dataclass(frozen=True)
class TaskDetail:
    """task_get: the task and its recent receipts."""

    task: Task
    receipts: tuple[Receipt, ...]

    @classmethod
    def of(cls, data: dict[str, Any]) -> TaskDetail:
        return cls(
            task=Task.of(data["task"]),
            receipts=tuple(Receipt.of(r) for r in data.get("receipts", [])),
        )


@dataclass(frozen=True)
class TaskUpdate:
    """task_update: the task after the change and the receipt it inserted (if any).
    `recovered` is true when the answer was lost and the outcome was read back instead."""

    task: Task
    receipt: Receipt | None
    recovered: bool = False


@dataclass(frozen=True)
class Written:
    """memory_add / task_create: the new row's summary. `replayed` is true when a journaled key
    from an earlier, unfinished attempt was sent again."""

    id: str
    raw: dict[str, Any] = field(repr=False, compare=False)
    replayed: bool = False


@dataclass(frozen=True)
class StateVersion:
    agent: str
    version: int
    body: str
    created_at: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> StateVersion:
        return cls(
            agent=data["agent"],
            version=int(data["version"]),
            body=data.get("body", ""),
            created_at=data.get("created_at", ""),
        )


@dataclass(frozen=True)
class SearchHit:
    """A memory_search result: a decision or a note, its preview in place of its texts."""

    id: str
    kind: str
    title: str
    preview: str
    supersedes: str | None
    created_at: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> SearchHit:
        supersedes = data.get("supersedes")
        return cls(
            id=str(data["id"]),
            kind=str(data["kind"]),
            title=str(data.get("title") or ""),
            preview=str(data.get("preview") or ""),
            supersedes=None if supersedes is None else str(supersedes),
            created_at=str(data.get("created_at", "")),
        )


@dataclass(frozen=True)
class MemorySearch:
    """memory_search: the query as the server read it, and the best matches first."""

    query: str
    results: tuple[SearchHit, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, data: dict[str, Any]) -> MemorySearch:
        return cls(
            query=str(data["query"]),
            results=tuple(SearchHit.of(hit) for hit in data.get("results", [])),
            raw=data,
        )
