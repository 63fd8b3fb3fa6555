"""Takeover under real concurrency on PostgreSQL: 64 threads, one connection each, released
together by a barrier, claim one task whose lease expired, for ROUNDS rounds. Exactly one wins
each round: the row lock (FOR UPDATE SKIP LOCKED) and the compare-and-set on version and the
lease's expiry in continuity.services.claims. Remove both and this test fails (two or more
winners a round)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from continuity.models import Task
from continuity.services import task_claim_next
from core.access import Caller
from tests.continuity.helpers import Crew, new_task
from tests.continuity.test_concurrency import (  # noqa: F401 (an autouse fixture)
    ROUNDS,
    _try,
    one_race_at_a_time,
)
from tests.factories import World, wc

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

CLAIMERS = 64


def _claim(i: int, *, callers: list[Caller]) -> tuple[str, Any]:
    return _try(
        task_claim_next, callers[i], write_context=wc(callers[i]), session_ref=f"claimer-{i}"
    )


def test_64_claimers_of_one_expired_lease_leave_exactly_one_winner(world: World) -> None:
    owner = world.caller("owner")
    winners_by_round = []
    with Crew(CLAIMERS) as crew:
        for round_ in range(ROUNDS):
            task = new_task(owner, f"crashed {round_}")
            task_claim_next(owner, write_context=wc(owner), session_ref=f"dead-{round_}")
            past = timezone.now() - timedelta(seconds=1)
            Task.objects.filter(pk=task["id"]).update(lease_expires_at=past)
            callers = [world.caller("contributor") for _ in range(CLAIMERS)]

            results = crew.round(partial(_claim, callers=callers))

            assert {code for code, _ in results} == {"ok"}, (round_, results)
            won = [i for i, (_, r) in enumerate(results) if r["task"] is not None]
            assert len(won) == 1, (round_, won)
            (winner,) = won
            stored = Task.objects.get(pk=task["id"])
            assert (stored.version, stored.lease_session_ref) == (3, f"claimer-{winner}")
            takeovers = AuditEvent.objects.filter(
                request_id__in=[c.request_id for c in callers], operation="lease_expired"
            )
            assert [t.target_id for t in takeovers] == [f"{owner.actor.label}#dead-{round_}"]
            winners_by_round.append(winner)
    assert len(winners_by_round) == ROUNDS
    print(f"winners by thread: {Counter(winners_by_round)}")
