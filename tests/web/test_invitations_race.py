"""One link, many hands at once, on PostgreSQL: real threads, one connection each, released
together, each accepting the same invitation as a new account. Exactly one joins; every other
is refused as a used link, audited, and leaves no account behind."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from audit.models import AuditEvent
from projects.callers import session_caller
from projects.invitation_accept import NewAccount, invitation_accept
from projects.invitations import InvitationUnusable, invitation_create, token_digest
from projects.models import Membership
from tests.continuity.helpers import Crew
from tests.continuity.test_concurrency import one_race_at_a_time  # noqa: F401 (autouse)
from tests.factories import World

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

RACERS = 16
PASSWORD = "a-long-and-unusual-passphrase-42"


def test_racing_acceptances_of_one_link_make_one_membership(world: World):
    owner = session_caller(world.owner, world.alpha)
    assert owner is not None
    issued = invitation_create(owner, email="team@example.com", role="viewer")
    pk, digest = issued.invitation.pk, token_digest(issued.token)

    def accept(i: int) -> tuple[str, Any]:
        try:
            membership = invitation_accept(
                invitation_id=pk, token_hash=digest, account=NewAccount(f"racer{i}", PASSWORD)
            )
        except InvitationUnusable as error:
            return error.reason, None
        return "joined", membership.user.username

    with Crew(RACERS) as crew:
        results = crew.round(accept)

    assert Counter(code for code, _ in results) == Counter(joined=1, used=RACERS - 1)
    (winner,) = [name for code, name in results if code == "joined"]
    members = Membership.objects.filter(project=world.alpha, user__username__startswith="racer")
    assert [m.user.username for m in members] == [winner]
    assert get_user_model().objects.filter(username__startswith="racer").count() == 1
    outcomes = Counter(
        AuditEvent.objects.filter(operation="invitation_accept").values_list(
            "outcome", "error_code"
        )
    )
    assert outcomes == Counter({("success", ""): 1, ("rejected", "invitation_used"): RACERS - 1})
