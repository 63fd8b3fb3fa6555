"""What the audit log can prove, for people and pages (the web UI reads these; keep them stable).

- `chain_state(name)`: a chain's head (events, last hash, time), how far the last
  `verify_audit` run verified it, and the last checkpoint taken (`audit_checkpoint`). A
  project's live chain is `audit.chain.live_chain(project)`; the security chain (events that
  belong to no project) is `audit.chain.SECURITY_CHAIN`. Three queries.
- `project_chains(project)`: a project's chains, archived ones (an import's) first;
  `project_ids(project)`: the project ids its events carry (an archive's, then its own).
- `event_proof(event)`: one event's place in its chain and whether its own hashes match its
  fields (no query; its neighbours are `verify_audit`'s business).
- `take_checkpoints()`: every chain's head, stored as a checkpoint row and returned for printing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from audit import chain
from audit.models import AuditChainHead, AuditCheckpoint, AuditEvent, AuditVerification
from audit.proof import event_intact


@dataclass(frozen=True)
class Head:
    events: int  # the chain's length: the position of its last event
    last_hash: str
    last_time: dt.datetime


@dataclass(frozen=True)
class Verification:
    ran_at: dt.datetime
    ok: bool
    verified_seq: int  # every event up to this position verified
    verified_hash: str
    head_seq: int  # the head's position when it ran
    problem: str  # the first problem found, "" when ok


@dataclass(frozen=True)
class Checkpoint:
    taken_at: dt.datetime
    seq: int
    hash: str
    head_time: dt.datetime


@dataclass(frozen=True)
class ChainState:
    chain: str
    head: Head | None  # None: no event yet
    verification: Verification | None  # None: never verified
    checkpoint: Checkpoint | None  # None: no checkpoint taken


@dataclass(frozen=True)
class EventProof:
    chain: str
    seq: int | None
    prev_hash: str
    digest: str
    hash: str
    digest_matches: bool  # its fields give its digest
    hash_matches: bool  # its hash is the hash of (prev_hash, seq, digest)

    @property
    def intact(self) -> bool:
        return self.digest_matches and self.hash_matches


def project_chains(project: Any) -> list[str]:
    """Every chain of a project, in order: the archived ones an import brought (those of the
    project it was imported into over REST, if it was, then its own, by generation) and its
    live one (audit.chain.chain_of)."""
    firsts = [chain.chain_of(key) for key in project_ids(project)]
    wanted = Q()
    for first in firsts:
        wanted |= Q(chain=first) | Q(chain__startswith=f"{first}.")
    names = set(AuditChainHead.objects.filter(wanted).values_list("chain", flat=True))
    names.add(chain.live_chain(project))
    order: dict[str, tuple[int, int]] = {}
    for name in names:
        for place, key in enumerate(project_ids(project)):
            generation = chain.generation_of(name, key)
            if generation is not None:
                order[name] = (place, generation)
    return sorted(order, key=order.__getitem__)


def project_ids(project: Any) -> list[str]:
    """The project ids a project's audit events carry: the project whose chains it holds
    archived (audit_archive, when it holds another's), then its own."""
    archive = str(getattr(project, "audit_archive", "") or "")
    return [archive, str(project.pk)] if archive else [str(project.pk)]


def chain_state(name: str) -> ChainState:
    """One chain's state (a project's live chain: audit.chain.live_chain)."""
    head = AuditChainHead.objects.filter(chain=name).first()
    run = AuditVerification.objects.filter(chain=name).order_by("-ran_at", "-id").first()
    point = AuditCheckpoint.objects.filter(chain=name).order_by("-taken_at", "-id").first()
    return ChainState(
        chain=name,
        head=Head(head.seq, head.last_hash, head.last_time) if head else None,
        verification=Verification(
            run.ran_at, run.ok, run.verified_seq, run.verified_hash, run.head_seq, run.problem
        )
        if run
        else None,
        checkpoint=Checkpoint(point.taken_at, point.seq, point.hash, point.head_time)
        if point
        else None,
    )


def event_proof(event: AuditEvent) -> EventProof:
    fields = {name: getattr(event, name) for name in (*chain.FIELDS, *chain.CHAIN_FIELDS)}
    digest_ok, hash_ok = event_intact(fields)
    return EventProof(
        chain=event.chain,
        seq=event.seq,
        prev_hash=event.prev_hash,
        digest=event.digest,
        hash=event.hash,
        digest_matches=digest_ok,
        hash_matches=hash_ok,
    )


def take_checkpoints() -> list[AuditCheckpoint]:
    """Store and return every chain's head as it is now."""
    heads = AuditChainHead.objects.order_by("chain")
    return AuditCheckpoint.objects.bulk_create(
        AuditCheckpoint(chain=h.chain, seq=h.seq, hash=h.last_hash, head_time=h.last_time)
        for h in heads
    )
