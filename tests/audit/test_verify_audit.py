"""verify_audit names the first edited, inserted or missing event, and with a stored checkpoint
a tail cut off; each tampering is done as the database owner with the triggers lifted."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from audit.models import AuditChainHead, AuditEvent, AuditVerification
from tests.audit.helpers import security_event, sql, triggers_lifted

CHAIN = "security"


def _db_id(event: AuditEvent) -> object:
    return event.pk.hex if connection.vendor == "sqlite" else event.pk


def verify(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_audit", *args, stdout=out)
    except SystemExit as exit:
        return int(exit.code or 0), out.getvalue()
    return 0, out.getvalue()


@pytest.fixture
def events(db: None) -> list[AuditEvent]:
    for n in range(6):
        security_event(n=n)
    return list(AuditEvent.objects.filter(chain=CHAIN).order_by("seq"))


def test_it_passes_an_untouched_chain_and_stores_the_result(events: list[AuditEvent]):
    code, out = verify("--security")
    assert code == 0, out
    assert "security: ok, 6 events, verified to 6" in out
    run = AuditVerification.objects.get()
    assert (run.ok, run.verified_seq, run.verified_hash) == (True, 6, events[-1].hash)


def test_it_names_an_edited_event(events: list[AuditEvent]):
    with triggers_lifted():
        sql("UPDATE audit_auditevent SET error_code = 'nothing' WHERE id = %s", [_db_id(events[2])])
    code, out = verify()
    assert code == 1
    assert f"edited at seq 3 (event {events[2].pk}): its fields do not match its digest" in out
    run = AuditVerification.objects.get(chain=CHAIN)
    assert (run.ok, run.verified_seq) == (False, 2)
    assert run.problem.startswith("chain security: edited at seq 3")


def test_it_names_a_deleted_event_as_missing(events: list[AuditEvent]):
    with triggers_lifted():
        sql("DELETE FROM audit_auditevent WHERE id = %s", [_db_id(events[3])])
    code, out = verify("--security")
    assert code == 1
    assert "missing at seq 4: events 4 absent" in out.splitlines()[1]


def test_it_names_an_inserted_event(events: list[AuditEvent]):
    """A row forged in the middle of the chain, its own hashes right (the forger knows the
    encoding) but its link not: the events after it no longer follow."""
    with triggers_lifted():
        # make room at position 4, then put a forged event there
        sql("UPDATE audit_auditevent SET seq = seq + 100 WHERE chain = %s AND seq >= 4", [CHAIN])
        AuditEvent.objects.bulk_create([_forged(events, seq=4)])
        sql("UPDATE audit_auditevent SET seq = seq - 99 WHERE chain = %s AND seq >= 104", [CHAIN])
        sql("UPDATE audit_auditchainhead SET seq = 7 WHERE chain = %s", [CHAIN])
    code, out = verify("--security")
    assert code == 1
    forged = AuditEvent.objects.get(operation="forged")
    assert (
        f"inserted at seq 4 (event {forged.pk}): the event after it links past it"
        in (out.splitlines()[1])
    )
    assert AuditVerification.objects.get().verified_seq == 3


def _forged(events: list[AuditEvent], *, seq: int) -> AuditEvent:
    from audit import chain

    model = events[0]
    fields = {name: getattr(model, name) for name in chain.FIELDS}
    fields.update(id=__import__("uuid").uuid4(), operation="forged")
    digest = chain.digest(fields)
    prev = events[seq - 2].hash  # it links to the event before its place, as a real one would
    link = chain.chain_hash(prev, seq, digest)
    return AuditEvent(**fields, digest=digest, seq=seq, prev_hash=prev, hash=link)


def test_it_names_a_tail_removed_with_its_head_left(events: list[AuditEvent]):
    with triggers_lifted():
        sql("DELETE FROM audit_auditevent WHERE chain = %s AND seq > 4", [CHAIN])
    code, out = verify("--security")
    assert code == 1
    assert "missing at seq 5: events 5-6 absent; the head is at 6" in out


def test_it_names_a_truncated_tail_against_a_stored_checkpoint(
    events: list[AuditEvent], tmp_path: Path
):
    checkpoint = io.StringIO()
    call_command("audit_checkpoint", stdout=checkpoint)
    saved = tmp_path / "checkpoint.jsonl"
    saved.write_text(checkpoint.getvalue())
    [line] = [json.loads(x) for x in checkpoint.getvalue().splitlines()]
    assert (line["chain"], line["seq"], line["hash"]) == (CHAIN, 6, events[-1].hash)
    with triggers_lifted():
        # Cut the tail and move the head back to match: only the checkpoint can tell.
        sql("DELETE FROM audit_auditevent WHERE chain = %s AND seq > 4", [CHAIN])
        sql(
            "UPDATE audit_auditchainhead SET seq = 4, prev_hash = %s, last_hash = %s "
            "WHERE chain = %s",
            [events[2].hash, events[3].hash, CHAIN],
        )
    assert verify("--security")[0] == 0  # without the checkpoint nothing looks wrong
    code, out = verify("--security", "--checkpoint", str(saved))
    assert code == 1
    assert "truncated at seq 5: the chain ends at 4; a checkpoint names 6" in out
    assert AuditChainHead.objects.get(chain=CHAIN).seq == 4


def test_the_walk_crosses_gaps_wider_than_a_batch_and_a_position_far_ahead(
    events: list[AuditEvent],
):
    """chain_rows reads positions in ranges of `batch`: a run of missing events longer than a
    batch, and an event moved a million places ahead, are still read (and then named)."""
    from audit.export import chain_rows

    with triggers_lifted():
        sql(
            "DELETE FROM audit_auditevent WHERE id IN (%s, %s, %s)",
            [_db_id(events[1]), _db_id(events[2]), _db_id(events[3])],
        )
        sql("UPDATE audit_auditevent SET seq = 1000005 WHERE id = %s", [_db_id(events[5])])
    assert [row["seq"] for row in chain_rows(CHAIN, batch=2)] == [1, 5, 1000005]
    code, out = verify("--security")
    assert code == 1
    assert "missing at seq 2: events 2-4 absent" in out
