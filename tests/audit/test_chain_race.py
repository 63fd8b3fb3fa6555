"""64 concurrent writers over 4 projects, 10 rounds, on PostgreSQL: every chain stays one line
(no two events share a position or a predecessor) and verifies."""

from __future__ import annotations

from collections import Counter
from functools import partial

import pytest
from django.db.models import Count

from audit.models import AuditChainHead, AuditEvent
from audit.verify import verify_chain
from continuity.services import memory_add
from core.access import Caller
from tests.continuity.helpers import Crew
from tests.continuity.test_concurrency import one_race_at_a_time  # noqa: F401 (the fixture)
from tests.factories import make_project, make_user, token_caller, wc

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WRITERS = 64
PROJECTS = 4
ROUNDS = 10


def _write(i: int, *, callers: list[Caller], round_: int) -> str:
    caller = callers[i]
    memory_add(caller, write_context=wc(caller), kind="note", content=f"round {round_} writer {i}")
    return str(caller.project.pk)


def test_64_writers_over_4_projects_never_fork_a_chain() -> None:
    owner = make_user("olivia")
    projects = [make_project(f"race-{n}", owner) for n in range(PROJECTS)]
    before = {str(p.pk): AuditChainHead.objects.get(chain=str(p.pk)).seq for p in projects}
    callers = [token_caller(owner, projects[i % PROJECTS]) for i in range(WRITERS)]
    written: Counter[str] = Counter()
    with Crew(WRITERS) as crew:
        for round_ in range(ROUNDS):
            written.update(crew.round(partial(_write, callers=callers, round_=round_)))

    for project in projects:
        name = str(project.pk)
        events = AuditEvent.objects.filter(chain=name)
        assert written[name] == WRITERS // PROJECTS * ROUNDS
        assert events.count() == before[name] + written[name]
        forks = events.values("prev_hash").annotate(n=Count("id")).filter(n__gt=1)
        assert list(forks) == []
        seqs = sorted(seq or 0 for seq in events.values_list("seq", flat=True))
        assert seqs == list(range(1, before[name] + written[name] + 1))
        report = verify_chain(name)
        assert report.ok, report.problems
        assert report.verified_seq == AuditChainHead.objects.get(chain=name).seq == len(seqs)
