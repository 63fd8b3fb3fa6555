"""What the web UI shows: a chain's head, how far it was verified, its last checkpoint, and per
event its place and whether its hashes match its fields."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from audit.chain import SECURITY_CHAIN, live_chain
from audit.models import AuditEvent
from audit.state import chain_state, event_proof
from tests.audit.helpers import sql, triggers_lifted
from tests.factories import World


@pytest.mark.django_db
def test_a_chain_state_shows_its_head_verification_and_checkpoint(
    world: World, django_assert_num_queries
):
    last = AuditEvent.objects.filter(project_id=world.alpha.pk).order_by("-seq").first()
    assert last is not None
    fresh = chain_state(live_chain(world.alpha))
    assert fresh.head is not None
    assert fresh.head.events == last.seq
    assert (fresh.head.last_hash, fresh.head.last_time) == (last.hash, last.occurred_at)
    assert fresh.verification is None
    assert fresh.checkpoint is None

    call_command("verify_audit", "alpha", stdout=io.StringIO())
    call_command("audit_checkpoint", stdout=io.StringIO())
    with django_assert_num_queries(3):
        state = chain_state(live_chain(world.alpha))
    assert state.verification is not None
    assert state.verification.ok
    assert state.verification.verified_seq == last.seq
    assert state.checkpoint is not None
    assert (state.checkpoint.seq, state.checkpoint.hash) == (last.seq, last.hash)


@pytest.mark.django_db
def test_the_security_chain_has_a_state_too():
    state = chain_state(SECURITY_CHAIN)
    assert (state.chain, state.head) == ("security", None)


@pytest.mark.django_db
def test_an_event_proof_tells_an_edited_event(world: World, django_assert_num_queries):
    event = AuditEvent.objects.filter(project_id=world.alpha.pk).order_by("seq")[2]
    with django_assert_num_queries(0):
        proof = event_proof(event)
    assert (proof.chain, proof.seq, proof.intact) == (str(world.alpha.pk), 3, True)
    with triggers_lifted():
        sql("UPDATE audit_auditevent SET target_id = 'other' WHERE hash = %s", [event.hash])
    edited = event_proof(AuditEvent.objects.get(pk=event.pk))
    assert (edited.digest_matches, edited.hash_matches, edited.intact) == (False, True, False)
