"""The REST routes: the operation table's rows as resource paths under /api/v1/.

A route adds only what HTTP says differently: its method and path, which input fields come from
the path, the query string or a header (If-Match, Idempotency-Key), its success status, the
version it sends as an ETag, and its summary in REST wording. The input model, the output model,
the capability and the audit come from the operation table, as they do for MCP.
"""

from __future__ import annotations

from dataclasses import dataclass

from continuity.catalog import OPERATIONS, OperationSpec


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # under /api/v1/, with {name} for each path field
    operation_name: str
    summary: str
    query: tuple[str, ...] = ()
    body: bool = False
    status: int = 200
    # The result field that holds the version sent as ETag ("task.version": a nested field).
    etag: str = ""
    # If-Match carries expected_version: required (428 when missing) or optional.
    if_match: str = ""  # "", "required" or "optional"
    location: str = ""  # the created resource's path, with {id}
    page_of: str = ""  # the result's list, when it is a page with next_cursor

    @property
    def spec(self) -> OperationSpec:
        return OPERATIONS[self.operation_name]

    @property
    def path_fields(self) -> tuple[str, ...]:
        return tuple(part[1:-1] for part in self.path.split("/") if part.startswith("{"))

    @property
    def header_fields(self) -> tuple[str, ...]:
        fields = ("expected_version",) if self.if_match else ()
        return (*fields, "idempotency_key") if self.spec.idempotent else fields


PAGE = ("limit", "cursor")

ROUTES: tuple[Route, ...] = (
    Route("GET", "identity", "server_identity", "Who this server is and who you are here"),
    Route(
        "GET",
        "context",
        "continuity_context",
        "The bounded recovery index of this project",
        query=("memory_limit", "task_limit", "receipt_limit", "agent"),
    ),
    Route(
        "GET",
        "memories",
        "memory_list",
        "Decisions and notes, newest first, one page",
        query=("kind", *PAGE),
        page_of="memories",
    ),
    Route(
        "POST",
        "memories",
        "memory_add",
        "Record a decision or a note",
        body=True,
        status=201,
        location="memories/{id}",
    ),
    Route(
        "GET",
        "memories/search",
        "memory_search",
        "Full-text search over decisions and notes",
        query=("query", "kind", "limit"),
    ),
    Route("GET", "memories/{memory_id}", "memory_get", "One decision or note in full"),
    Route(
        "GET",
        "tasks",
        "task_list",
        "Tasks, newest first, one page",
        query=("status", *PAGE),
        page_of="tasks",
    ),
    Route(
        "POST",
        "tasks",
        "task_create",
        "Create a task",
        body=True,
        status=201,
        etag="version",
        location="tasks/{id}",
    ),
    # Before tasks/{task_id}: Django tries the paths in this order.
    Route(
        "POST",
        "tasks/claim",
        "task_claim_next",
        "Claim the next task with a lease: an expired lease's task, else the oldest ready one",
        body=True,
        etag="task.version",
    ),
    Route(
        "GET",
        "tasks/{task_id}",
        "task_get",
        "One task in full with its recent receipts",
        etag="task.version",
    ),
    Route(
        "PATCH",
        "tasks/{task_id}",
        "task_update",
        "Update a task against the version in If-Match, with an optional work receipt",
        body=True,
        etag="task.version",
        if_match="required",
    ),
    Route(
        "POST",
        "tasks/{task_id}/heartbeat",
        "task_heartbeat",
        "Extend your session's lease on a task (its version stays)",
        body=True,
    ),
    Route(
        "DELETE",
        "tasks/{task_id}/lease",
        "task_lease_release",
        "End a task's lease: it goes back to todo (owners and admins)",
        etag="task.version",
    ),
    Route(
        "GET",
        "tasks/{task_id}/receipts",
        "receipt_list",
        "A task's work receipts, newest first, one page",
        query=PAGE,
        page_of="receipts",
    ),
    Route(
        "GET",
        "state/{agent}",
        "state_get",
        "The newest running summary of an agent",
        etag="state.version",
    ),
    Route(
        "PUT",
        "state/{agent}",
        "state_put",
        "Store a new version of an agent's running summary (If-Match: the version you read)",
        body=True,
        status=201,
        etag="version",
        if_match="optional",
    ),
)
