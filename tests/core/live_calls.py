"""Plain HTTP calls to a live server's /mcp and REST API from threads, each with its own request
id, classified the way a client sees them: a result, a pinned tool error, a JSON-RPC error, or
something that must never happen (an HTTP 5xx, -32603, `internal_error`, a broken connection)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx2
import psycopg

from tests.live import LiveServer, maintenance_connection

ACCEPT = "application/json, text/event-stream"
VERSION = "2025-11-25"
# What a client may see while the database comes and goes: a retryable code, or an honest race.
RETRYABLE = {"unavailable", "stale_version"}


@dataclass
class Answer:
    tool: str
    request_id: str
    status: int  # HTTP status; 0 when the connection itself failed
    kind: str  # "result", "tool_error", "rpc_error", "broken"
    code: str = ""  # the pinned error code, for tool and JSON-RPC errors
    data: Any = None
    seconds: float = 0.0
    retry_after: str | None = None

    @property
    def ok(self) -> bool:
        return self.kind == "result"


def call_tool(
    http: httpx2.Client, server: LiveServer, key: str, tool: str, arguments: dict[str, Any]
) -> Answer:
    request_id = uuid.uuid4().hex
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": VERSION,
        "X-Request-ID": request_id,
    }
    started = time.monotonic()
    try:
        response = http.post(server.mcp_url, content=json.dumps(message), headers=headers)
    except httpx2.HTTPError as error:
        return Answer(tool, request_id, 0, "broken", data=repr(error))
    answer = classify(tool, request_id, response)
    answer.seconds = time.monotonic() - started
    return answer


def classify(tool: str, request_id: str, response: httpx2.Response) -> Answer:
    answer = Answer(tool, request_id, response.status_code, "broken", data=response.text[:500])
    answer.retry_after = response.headers.get("retry-after")
    if response.status_code != 200:
        return answer
    body = response.json()
    if "error" in body:
        error = body["error"]
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        # A pinned code travels in data; other JSON-RPC errors are named by their number.
        code = data.get("code") or f"rpc{error.get('code')}"
        answer.kind, answer.code, answer.data = "rpc_error", str(code), error
        if error.get("code") == -32603:
            answer.kind = "broken"  # an internal error is never an answer
        return answer
    result = body["result"]
    if result.get("isError"):
        error = result["structuredContent"]["error"]
        answer.kind, answer.code, answer.data = "tool_error", str(error["code"]), error
        return answer
    answer.kind, answer.data = "result", result["structuredContent"]
    return answer


def get_identity(http: httpx2.Client, server: LiveServer, key: str) -> Answer:
    request_id = uuid.uuid4().hex
    headers = {"Authorization": f"Bearer {key}", "X-Request-ID": request_id}
    started = time.monotonic()
    try:
        response = http.get(f"{server.api_url}/v1/identity", headers=headers)
    except httpx2.HTTPError as error:
        return Answer("rest_identity", request_id, 0, "broken", data=repr(error))
    answer = Answer("rest_identity", request_id, response.status_code, "broken")
    answer.seconds = time.monotonic() - started
    answer.retry_after = response.headers.get("retry-after")
    if response.status_code == 200:
        answer.kind, answer.data = "result", response.json()
    elif response.status_code == 503:
        answer.kind, answer.code = "rest_error", response.json()["error"]["code"]
    return answer


def audit_by_request(server: LiveServer, request_ids: list[str]) -> dict[str, list[list[str]]]:
    """{request id: [[operation, outcome, error_code], ...]} from the server's database."""
    rows = server.run_python(
        f"""
from audit.models import AuditEvent
wanted = set({sorted(request_ids)!r})
result = {{}}
for operation, outcome, code, request_id in AuditEvent.objects.values_list(
        "operation", "outcome", "error_code", "request_id"):
    if request_id in wanted:
        result.setdefault(request_id, []).append([operation, outcome, code])
"""
    )
    return dict(rows)


def database_name(server: LiveServer) -> str:
    return server.env["DATABASE_URL"].rsplit("/", 1)[1]


def terminate_backends(database: str) -> int:
    """End every backend of the live server's own database (never another database's)."""
    with maintenance_connection() as connection:
        row = connection.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            [database],
        ).fetchone()
    return int(row[0]) if row else 0


def live_connection(server: LiveServer) -> psycopg.Connection[Any]:
    """A connection of our own to the live server's database."""
    return psycopg.connect(server.env["DATABASE_URL"].replace("postgres://", "postgresql://"))
