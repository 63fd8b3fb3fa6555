"""Shared helpers for the continuity behaviour tests: service calls, expected rejections, audit
rows and thread rounds. Data is made through the services so that audit rows exist."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pydantic
import pytest
from django.db import connection

from audit.models import AuditEvent
from continuity.services import memory_add, task_create, task_update
from core.access import Caller
from core.errors import HeyAiraError
from projects.models import Project
from tests.factories import wc

Service = Callable[..., Any]


def as_json(result: pydantic.BaseModel) -> dict[str, Any]:
    """The result as every transport sends it."""
    return result.model_dump(mode="json")


def rejected(code: str, service: Service, caller: Caller, **arguments: Any) -> HeyAiraError:
    """Call the service, expect a HeyAiraError with this code, and return it."""
    with pytest.raises(HeyAiraError) as caught:
        service(caller, **arguments)
    error = caught.value
    assert error.code == code, f"expected {code}, got {error.code}: {error.message}"
    # Every error a client receives must survive the transports' compact UTF-8 JSON.
    json.dumps(error.as_dict(), ensure_ascii=False).encode("utf-8")
    return error


def outcome(service: Service, caller: Caller, **arguments: Any) -> Any:
    """The result, or the error code as a string: for tables and threads."""
    try:
        result = service(caller, **arguments)
    except HeyAiraError as error:
        return error.code
    return as_json(result) if isinstance(result, pydantic.BaseModel) else result


def audit_rows(project: Project, operation: str | None = None) -> list[AuditEvent]:
    """The project's audit rows, oldest first."""
    rows = AuditEvent.objects.filter(project_id=project.pk)
    if operation is not None:
        rows = rows.filter(operation=operation)
    return list(rows.order_by("occurred_at", "id"))


def last_audit(project: Project) -> AuditEvent:
    row = AuditEvent.objects.filter(project_id=project.pk).order_by("-occurred_at", "-id").first()
    assert row is not None
    return row


def audit_shape(event: AuditEvent) -> dict[str, Any]:
    """The fields of an audit row that say what happened (not who or when)."""
    return {
        "operation": event.operation,
        "outcome": event.outcome,
        "error_code": event.error_code,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "project_id": event.project_id,
    }


# --- data through the services ------------------------------------------------------------


def add_note(caller: Caller, content: str = "A durable note.", **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = as_json(
        memory_add(caller, write_context=wc(caller), kind="note", content=content, **extra)
    )
    return result


def add_decision(
    caller: Caller, content: str = "We use PostgreSQL in production.", **extra: Any
) -> dict[str, Any]:
    extra.setdefault("rationale", "One store for every table.")
    extra.setdefault("source", "issue 2")
    result: dict[str, Any] = as_json(
        memory_add(caller, write_context=wc(caller), kind="decision", content=content, **extra)
    )
    return result


def new_task(caller: Caller, title: str = "Ship the core", **extra: Any) -> dict[str, Any]:
    extra.setdefault("description", "Services, selectors and their tests.")
    result: dict[str, Any] = as_json(
        task_create(caller, write_context=wc(caller), title=title, **extra)
    )
    return result


def update_task(caller: Caller, task: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """task_update naming the task's version as the caller last saw it."""
    changes.setdefault("expected_version", task["version"])
    result: dict[str, Any] = as_json(
        task_update(caller, write_context=wc(caller), task_id=task["id"], **changes)
    )
    return result


def update_rejected(
    code: str, caller: Caller, task: dict[str, Any], **changes: Any
) -> HeyAiraError:
    """update_task, expecting a rejection with this code; returns the error."""
    if "expected_version" not in changes:
        changes["expected_version"] = task["version"]
    return rejected(
        code, task_update, caller, write_context=wc(caller), task_id=task["id"], **changes
    )


def receipt(session_ref: str = "session-1", **extra: Any) -> dict[str, Any]:
    return {"session_ref": session_ref, "summary": "Wrote the tests.", **extra}


# --- SQL observation ----------------------------------------------------------------------


@contextmanager
def audit_inserts_seen() -> Iterator[list[bool]]:
    """For each audit INSERT, whether it ran inside an atomic block (a real transaction)."""
    seen: list[bool] = []

    def observe(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.startswith('INSERT INTO "audit_auditevent"'):
            seen.append(context["connection"].in_atomic_block)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(observe):
        yield seen


# --- threads ------------------------------------------------------------------------------


class Crew:
    """`size` real threads, each with its own database connection for its whole life, that run
    one piece of work per round, released together by a barrier.

    The threads (and so their connections) are kept across rounds: opening and closing 64
    connections a round would let the closing backends of one round and the new ones of the
    next exceed PostgreSQL's max_connections for a moment. Use it as a context manager; each
    thread closes its connection when the crew is done.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._start = threading.Barrier(size + 1)
        self._done = threading.Barrier(size + 1)
        self._work: Callable[[int], Any] | None = None
        self._results: list[Any] = []
        self._failures: list[BaseException] = []
        self._threads = [threading.Thread(target=self._serve, args=(i,)) for i in range(size)]

    def __enter__(self) -> Crew:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._work = None
        # If a round broke the barrier, the threads are leaving already.
        with suppress(threading.BrokenBarrierError):
            self._start.wait(timeout=60)
        for thread in self._threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in self._threads), "a thread did not finish"

    def round(self, work: Callable[[int], Any]) -> list[Any]:
        """Run work(0..size-1) at once, one call per thread; the results in thread order. An
        unexpected exception in any thread fails the test."""
        self._work, self._results = work, [None] * self.size
        self._start.wait(timeout=60)
        self._done.wait(timeout=300)
        if self._failures:
            raise self._failures[0]
        return list(self._results)

    def _serve(self, index: int) -> None:
        try:
            while True:
                self._start.wait(timeout=600)
                work = self._work
                if work is None:
                    return
                try:
                    self._results[index] = work(index)
                except BaseException as error:  # reported by round(), in the test's thread
                    self._failures.append(error)
                self._done.wait(timeout=600)
        except threading.BrokenBarrierError:
            return
        finally:
            connection.close()
