"""Leases on claims: a claim holds one for its session, the holder renews it, another session is
refused while it is live, and task_claim_next takes the task over once it has expired.

Time is the server's: a test that needs a lease to have expired moves its expiry into the past
(what the clock would have done), never the other way round."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from continuity.models import Task, WorkReceipt
from continuity.selectors import continuity_context, task_get
from continuity.services import task_claim_next, task_heartbeat, task_lease_release
from tests.continuity.helpers import (
    as_json,
    audit_rows,
    new_task,
    receipt,
    rejected,
    update_rejected,
    update_task,
)
from tests.factories import World, wc

pytestmark = pytest.mark.django_db


def claim(caller: Any, session_ref: str, **extra: Any) -> dict[str, Any]:
    return as_json(
        task_claim_next(caller, write_context=wc(caller), session_ref=session_ref, **extra)
    )


def heartbeat(caller: Any, task_id: str, session_ref: str) -> dict[str, Any]:
    beat = task_heartbeat(
        caller, write_context=wc(caller), task_id=task_id, session_ref=session_ref
    )
    return as_json(beat)


def expire(task_id: str, seconds_ago: int = 1) -> None:
    """The lease ran out `seconds_ago` seconds ago."""
    past = timezone.now() - timedelta(seconds=seconds_ago)
    Task.objects.filter(pk=task_id).update(lease_expires_at=past)


def expires_in(task: dict[str, Any]) -> float:
    moment = parse_datetime(task["lease"]["expires_at"])
    assert moment is not None
    return (moment - timezone.now()).total_seconds()


def test_a_claim_holds_a_lease_for_its_session_for_the_projects_default(world: World):
    owner = world.caller("owner")
    new_task(owner)
    task = claim(owner, "s-a")["task"]
    assert task["status"] == "in_progress"
    assert task["lease"]["holder"] == {"actor": owner.actor.label, "session_ref": "s-a"}
    assert 890 < expires_in(task) <= 900
    assert as_json(task_get(owner, task_id=task["id"]))["task"]["lease"] == task["lease"]


def test_a_claim_may_ask_for_a_lease_within_the_bounds(world: World):
    owner = world.caller("owner")
    made = new_task(owner)
    task = update_task(owner, made, status="in_progress", session_ref="s-a", lease_seconds=30)
    assert 25 < expires_in(task["task"]) <= 30
    for given in (29, 86_401, 0):
        error = rejected(
            "validation_error",
            task_claim_next,
            owner,
            write_context=wc(owner),
            session_ref="s-b",
            lease_seconds=given,
        )
        assert set(error.details["fields"]) == {"lease_seconds"}


@override_settings(HEYAIRA_LEASE_MIN_SECONDS=2)
def test_a_test_server_may_lower_the_floor(world: World):
    owner = world.caller("owner")
    new_task(owner)
    assert 0 < expires_in(claim(owner, "s-a", lease_seconds=2)["task"]) <= 2


def test_leaving_in_progress_ends_the_lease(world: World):
    owner = world.caller("owner")
    new_task(owner)
    task = claim(owner, "s-a")["task"]
    handed = update_task(owner, task, status="todo", session_ref="s-a")["task"]
    assert handed["lease"] is None
    stored = Task.objects.get(pk=task["id"])
    assert (stored.lease_actor, stored.lease_session_ref, stored.lease_expires_at) == ("", "", None)


def test_another_session_is_refused_while_the_lease_is_live_and_leaves_no_receipt(world: World):
    owner, contributor = world.caller("owner"), world.caller("contributor")
    new_task(owner)
    task = claim(owner, "s-a", lease_seconds=60)["task"]
    error = update_rejected(
        "lease_held", contributor, task, status="done", work_receipt=receipt("s-b")
    )
    assert error.details["lease"] == task["lease"]
    assert owner.actor.label in error.message
    assert "s-a" in error.message
    # The same actor in another session is another session too.
    update_rejected("lease_held", owner, task, next_step="x", session_ref="s-other")
    assert not WorkReceipt.objects.filter(task_id=task["id"]).exists()
    assert Task.objects.get(pk=task["id"]).version == task["version"]
    assert [e.error_code for e in audit_rows(world.alpha, "task_update")] == ["lease_held"] * 2


def test_the_holder_renews_with_any_update_and_with_heartbeats_that_keep_the_version(
    world: World,
):
    owner = world.caller("owner")
    new_task(owner)
    task = claim(owner, "s-a", lease_seconds=60)["task"]
    expire(task["id"], seconds_ago=-10)  # 10 s left
    beat = heartbeat(owner, task["id"], "s-a")
    assert beat["version"] == task["version"] == Task.objects.get(pk=task["id"]).version
    assert 55 < expires_in(beat) <= 60
    expire(task["id"], seconds_ago=-10)
    updated = update_task(owner, task, next_step="Go on.", session_ref="s-a", lease_seconds=60)
    assert 55 < expires_in(updated["task"]) <= 60
    # A handoff names its session in the receipt: the holder's own write.
    done = update_task(owner, updated["task"], status="done", work_receipt=receipt("s-a"))
    assert done["task"]["lease"] is None


def test_a_holder_whose_lease_expired_but_was_not_taken_over_still_holds_it(world: World):
    owner = world.caller("owner")
    new_task(owner)
    task = claim(owner, "s-a")["task"]
    expire(task["id"])
    beat = heartbeat(owner, task["id"], "s-a")
    assert expires_in(beat) > 890


def test_claim_next_takes_over_the_longest_expired_lease_before_ready_tasks(world: World):
    owner, contributor = world.caller("owner"), world.caller("contributor")
    first, second = new_task(owner, "first"), new_task(owner, "second")
    ready = new_task(owner, "ready")
    claim(owner, "s-a")  # first
    claim(owner, "s-a2")  # second
    expire(second["id"], seconds_ago=20)
    expire(first["id"], seconds_ago=5)
    taken = claim(contributor, "s-b")["task"]
    assert taken["id"] == second["id"]
    assert taken["version"] == 3  # created 1, claimed 2, taken over 3
    assert taken["lease"]["holder"] == {"actor": contributor.actor.label, "session_ref": "s-b"}
    assert claim(contributor, "s-b")["task"]["id"] == first["id"]
    assert claim(contributor, "s-b")["task"]["id"] == ready["id"]
    assert claim(contributor, "s-b")["task"] is None
    # Each takeover is audited, naming the old holder, before the claim's own row.
    shapes = [
        (e.operation, e.target_type, e.target_id)
        for e in audit_rows(world.alpha)
        if e.actor_label == contributor.actor.label
    ]
    assert shapes[:2] == [
        ("lease_expired", "lease_holder", f"{owner.actor.label}#s-a2"),
        ("task_claim_next", "task", second["id"]),
    ]


def test_a_live_lease_is_never_taken_over(world: World):
    owner, contributor = world.caller("owner"), world.caller("contributor")
    new_task(owner)
    claim(owner, "s-a", lease_seconds=30)
    assert claim(contributor, "s-b")["task"] is None


def test_after_a_takeover_the_old_holder_is_fenced_off(world: World):
    owner, contributor = world.caller("owner"), world.caller("contributor")
    new_task(owner)
    old = claim(owner, "s-a")["task"]
    expire(old["id"])
    new = claim(contributor, "s-b")["task"]
    # Its late handoff names the version it knew: stale, and its receipt is not kept.
    update_rejected("stale_version", owner, old, status="done", work_receipt=receipt("s-a"))
    # Read again, it meets the new holder's lease.
    update_rejected("lease_held", owner, new, status="done", work_receipt=receipt("s-a"))
    error = rejected(
        "lease_lost",
        task_heartbeat,
        owner,
        write_context=wc(owner),
        task_id=old["id"],
        session_ref="s-a",
    )
    assert error.details["lease"]["holder"]["session_ref"] == "s-b"
    assert not WorkReceipt.objects.filter(task_id=old["id"]).exists()


def test_another_session_may_claim_a_task_whose_lease_expired_by_updating_it(world: World):
    owner, contributor = world.caller("owner"), world.caller("contributor")
    new_task(owner)
    old = claim(owner, "s-a")["task"]
    expire(old["id"])
    taken = update_task(contributor, old, status="in_progress", session_ref="s-b")["task"]
    assert taken["lease"]["holder"]["session_ref"] == "s-b"
    assert [e.operation for e in audit_rows(world.alpha)][-2:] == ["lease_expired", "task_update"]


def test_a_heartbeat_without_a_lease_is_lease_lost(world: World):
    owner = world.caller("owner")
    task = new_task(owner)
    rejected(
        "lease_lost",
        task_heartbeat,
        owner,
        write_context=wc(owner),
        task_id=task["id"],
        session_ref="s",
    )


def test_context_shows_who_holds_each_task_and_flags_your_expiring_leases(world: World):
    owner, contributor = world.caller("owner"), world.caller("contributor")
    for n in range(3):
        new_task(owner, f"t{n}")
    mine = claim(owner, "s-a", lease_seconds=90)["task"]
    expiring = claim(owner, "s-a", lease_seconds=90)["task"]
    gone = claim(owner, "s-a")["task"]
    expire(expiring["id"], seconds_ago=-20)  # 20 of 90 s left
    expire(gone["id"])
    by_id = {t["id"]: t for t in as_json(continuity_context(owner))["tasks"]}
    assert by_id[mine["id"]]["lease"]["state"] == "live"
    assert by_id[expiring["id"]]["lease"]["state"] == "expiring"
    assert by_id[gone["id"]]["lease"]["state"] == "expired"
    # Someone else's lease with little time left is simply live.
    others = {t["id"]: t for t in as_json(continuity_context(contributor))["tasks"]}
    assert others[expiring["id"]]["lease"]["state"] == "live"
    assert others[mine["id"]]["lease"]["holder"]["session_ref"] == "s-a"


def test_owners_and_admins_release_a_stuck_lease_naming_its_holder(world: World):
    owner, admin, contributor = (world.caller(r) for r in ("owner", "admin", "contributor"))
    new_task(owner)
    task = claim(contributor, "s-c")["task"]
    rejected("forbidden", task_lease_release, contributor, task_id=task["id"])
    released = as_json(task_lease_release(admin, task_id=task["id"]))
    assert released["released"] == task["lease"]
    assert released["task"]["status"] == "todo"
    assert released["task"]["lease"] is None
    assert released["task"]["version"] == task["version"] + 1
    ops = [(e.operation, e.target_type, e.target_id) for e in audit_rows(world.alpha)][-2:]
    assert ops == [
        ("lease_released", "lease_holder", f"{contributor.actor.label}#s-c"),
        ("task_lease_release", "task", task["id"]),
    ]
    # The old holder is fenced off, and the task is claimable again.
    rejected(
        "lease_lost",
        task_heartbeat,
        contributor,
        write_context=wc(contributor),
        task_id=task["id"],
        session_ref="s-c",
    )
    assert claim(owner, "s-a")["task"]["id"] == task["id"]
    # Nothing to release: the task is left as it is.
    assert task_lease_release(owner, task_id=new_task(owner)["id"]).released is None
