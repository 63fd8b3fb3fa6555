"""Every REST read makes the same number of SQL queries with 3 rows or 300 of each kind.

Each count is the whole request: the API key's lookup (one query with its user, project and
member's role), the operation's reads and the audit row it writes.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.continuity.api.helpers import Api, api_for
from tests.continuity.test_read_query_counts import fill
from tests.factories import World

# path (with {memory} and {task} for the ids `fill` made) -> its queries
READS: dict[str, int] = {
    "identity": 2,
    "context": 8,
    "context?memory_limit=50&task_limit=100&receipt_limit=50&agent=codex": 8,
    "memories?limit=100": 3,
    "memories?kind=note&limit=2&cursor={memory_cursor}": 3,
    "memories/{memory}": 4,
    "memories/search?query=deploy&limit=50": 3,
    "tasks?limit=100": 3,
    "tasks?status=open&limit=2&cursor={task_cursor}": 3,
    "tasks/{task}": 4,
    "tasks/{task}/receipts?limit=50": 4,
    "tasks/{task}/receipts?limit=2&cursor={receipt_cursor}": 4,
    "state/codex": 3,
}


def cursors(api: Api, ids: dict[str, Any]) -> dict[str, Any]:
    """A second-page cursor of each list, fetched before the measured request."""
    found = dict(ids)
    for name, path in (
        ("memory_cursor", "memories?kind=note&limit=2"),
        ("task_cursor", "tasks?status=open&limit=2"),
        ("receipt_cursor", f"tasks/{ids['task']}/receipts?limit=2"),
    ):
        found[name] = api.get(path).json()["next_cursor"]
    return found


@pytest.mark.django_db
@pytest.mark.parametrize("rows", [3, 300])
@pytest.mark.parametrize("read", list(READS))
def test_each_endpoint_makes_a_fixed_number_of_queries(world: World, read: str, rows: int):
    api = api_for(world, "owner")
    path = read.format(**cursors(api, fill(world, rows)))
    with CaptureQueriesContext(connection) as queries:
        answer = api.get(path)
    assert answer.status_code == 200, answer.json()
    assert len(queries) == READS[read], [q["sql"][:120] for q in queries.captured_queries]
