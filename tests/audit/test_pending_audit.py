"""Audit rows the database could not take wait in a bounded queue and are written by the next
unit of database work that succeeds; past the bound, or at the end of the process, they are
logged at WARNING with their fields (never bodies or secrets) instead of being lost."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from django.test import Client as DjangoClient

from audit import recorder
from audit.models import AuditEvent
from continuity.selectors import server_identity
from identity import authn
from runtime.orm import run_orm
from tests.factories import World, build_world


@pytest.fixture
def world(transactional_db: None) -> World:
    # Outside a test transaction: pending rows are only written outside any transaction.
    return build_world()


@pytest.fixture(autouse=True)
def empty_queue() -> Iterator[None]:
    recorder.log_pending()
    yield
    recorder.log_pending()


def test_the_next_successful_unit_writes_the_rows_that_waited(world: World) -> None:
    caller = world.caller("owner")
    recorder.defer_rejection(caller, "memory_add", "unavailable")
    authn.defer_unavailable_audit("Bearer hak_0123456789ab_x", resource="mcp", request_id="r-2")
    assert recorder.pending_count() == 2
    assert not AuditEvent.objects.filter(error_code="unavailable").exists()

    asyncio.run(run_orm(server_identity, caller))

    assert recorder.pending_count() == 0
    rows = {
        (e.operation, e.outcome, e.request_id, e.credential_kind)
        for e in AuditEvent.objects.filter(error_code="unavailable")
    }
    assert rows == {
        ("memory_add", "rejected", caller.request_id, caller.credential.kind),
        ("authenticate", "rejected", "r-2", "api_key"),
    }


def test_a_full_queue_logs_the_oldest_row_instead_of_losing_it(
    world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(recorder, "MAX_PENDING", 2)
    secret = "hak_0123456789ab_" + "s" * 43
    with caplog.at_level(logging.WARNING, logger="audit.recorder"):
        for number in range(3):
            authn.defer_unavailable_audit(
                f"Bearer {secret}", resource="api", request_id=f"q-{number}"
            )
    assert recorder.pending_count() == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "'request_id': 'q-0'" in warnings[0]
    assert "'error_code': 'unavailable'" in warnings[0]
    assert secret not in warnings[0]
    assert "s" * 43 not in warnings[0]


def test_rows_still_waiting_at_the_end_are_logged(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    recorder.defer_rejection(world.caller("contributor"), "task_update", "unavailable")
    with caplog.at_level(logging.WARNING, logger="audit.recorder"):
        recorder.log_pending()
    assert recorder.pending_count() == 0
    (message,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "the process ended" in message
    assert "'operation': 'task_update'" in message


def test_any_django_request_also_writes_them(world: World, client: DjangoClient) -> None:
    recorder.defer_rejection(world.caller("owner"), "task_get", "unavailable")
    assert client.get("/healthz").status_code == 200
    assert recorder.pending_count() == 0
    assert AuditEvent.objects.filter(operation="task_get", error_code="unavailable").count() == 1
