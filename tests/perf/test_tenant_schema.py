"""The schema stays ready to be distributed by project (Citus, docs/scaling.md).

- Every unique constraint of a project-distributed table includes project_id (Citus enforces
  uniqueness per shard only), and so does every index, but for the few named below: indexes
  for work across all projects (purges by age), whose every use is listed with its reason.
- Every statement an operation sends to one of these tables names its project: its WHERE
  filters on project_id, or its INSERT writes it. On Citus that routes it to one shard.

The primary keys are the exception the scaling guide describes: random UUIDs, unique by
construction; on Citus they become (project_id, id).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.apps import apps
from django.db import connection

from core.errors import HeyAiraError
from identity import authn
from tests.factories import World
from tests.perf.statement_log import statements_sent
from tests.perf.test_statement_counts import STATEMENTS, prepare, run

# The tables distributed by project_id on Citus (the rest are reference tables: docs/scaling.md).
DISTRIBUTED = (
    "continuity.Memory",
    "continuity.Task",
    "continuity.TaskDependency",
    "continuity.WorkReceipt",
    "continuity.IdempotencyRecord",
    "continuity.StateVersion",
    "audit.AuditEvent",
)
# index -> why it may leave project_id out
CROSS_PROJECT_INDEXES = {
    "continuity_idempotencyrecord_created_at": "purge_idempotency deletes by age, all projects",
    "audit_auditevent_occurred_at": "the audit log's retention and time range, all projects",
    "audit_request": "an operator finds a request's rows by its id, whatever the project",
    "memory_search_vector": "full-text (GIN) index: searched only together with project_id",
    # A chain is one project's (named by its id, or <id>.<generation> after an import:
    # audit.chain.chain_of) or the project-less security chain, which leaves the distributed
    # table on Citus (docs/scaling.md); there the position's key becomes (project_id, chain, seq).
    "audit_chain_position": "(chain, seq): the chain names its project",
}


def _tables() -> list[str]:
    return [apps.get_model(label)._meta.db_table for label in DISTRIBUTED]


def _constraints(table: str) -> dict[str, dict[str, Any]]:
    with connection.cursor() as cursor:
        return connection.introspection.get_constraints(cursor, table)


def _allowed(name: str) -> bool:
    return any(name.startswith(prefix) for prefix in CROSS_PROJECT_INDEXES)


@pytest.mark.django_db
@pytest.mark.parametrize("table", _tables())
def test_every_unique_constraint_of_a_distributed_table_includes_its_project(table: str):
    for name, constraint in _constraints(table).items():
        if constraint["unique"] and not constraint["primary_key"] and not _allowed(name):
            assert "project_id" in constraint["columns"], (table, name, constraint["columns"])


@pytest.mark.django_db
@pytest.mark.parametrize("table", _tables())
def test_every_index_of_a_distributed_table_includes_its_project(table: str):
    for name, constraint in _constraints(table).items():
        if constraint["primary_key"] or constraint["foreign_key"] or _allowed(name):
            continue
        if constraint["index"] or constraint["unique"]:
            assert "project_id" in constraint["columns"], (table, name, constraint["columns"])


_TABLE = re.compile(r'(?:FROM|INTO|UPDATE|JOIN)\s+"?(\w+)"?', re.IGNORECASE)


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(STATEMENTS))
def test_every_statement_to_a_distributed_table_names_its_project(world: World, case: str):
    _, name, arguments = STATEMENTS[case]
    header, made = prepare(world)
    with statements_sent(connection) as statements:
        caller = authn.authenticate(header, resource="mcp", request_id="counted")
        try:
            run(caller, name, arguments(made))
        except HeyAiraError:
            assert "refused" in case
    distributed = set(_tables())
    for sql in statements:
        touched = distributed & set(_TABLE.findall(sql))
        if touched:
            assert "project_id" in sql, (sorted(touched), sql[:300])
