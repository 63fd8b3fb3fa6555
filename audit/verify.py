"""`verify_audit` over the database and over export files: walk each chain (audit.proof),
compare its end with the chain's head and with stored checkpoints, and keep the result."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import QuerySet

from audit.export import chain_rows, read_export
from audit.models import AuditChainHead, AuditEvent, AuditVerification
from audit.proof import ChainReport, ChainWalker, Checkpoint

PROBLEM_CHARS = 300


def chain_names() -> list[str]:
    """Every chain the database knows of: those with a head and those with events."""
    names = set(AuditChainHead.objects.values_list("chain", flat=True))
    names.update(AuditEvent.objects.order_by().values_list("chain", flat=True).distinct())
    return sorted(names)


def verify_chain(
    name: str, *, checkpoints: Iterable[Checkpoint] = (), store: bool = True
) -> ChainReport:
    """Walk one chain in the database from its first event to its head."""
    walker = ChainWalker(name, checkpoints=checkpoints, canonical=True)
    events: QuerySet[AuditEvent] = AuditEvent.objects.filter(chain=name)
    for row in chain_rows(name):
        walker.feed(row)
    for event_id in events.filter(seq__isnull=True).values_list("id", flat=True)[:10]:
        walker.feed({"id": event_id, "seq": None})
    head = AuditChainHead.objects.filter(chain=name).values_list("seq", "last_hash").first()
    report = walker.finish(head if head is not None else (0, ""))
    if store:
        _store(report, head_seq=head[0] if head else 0)
    return report


def _store(report: ChainReport, *, head_seq: int) -> None:
    problem = report.first_problem
    AuditVerification.objects.create(
        chain=report.chain,
        ok=report.ok,
        verified_seq=report.verified_seq,
        verified_hash=report.verified_hash,
        head_seq=head_seq,
        problem=str(problem)[:PROBLEM_CHARS] if problem else "",
    )


def verify_file(
    lines: Iterable[str], *, checkpoints: Iterable[Checkpoint] = ()
) -> tuple[bool, list[ChainReport]]:
    """Check an export (audit.export) without the database: (filtered?, one report per chain)."""
    header, rows = read_export(lines)
    points = list(checkpoints)
    walkers: dict[str, ChainWalker] = {}
    for row in rows:
        name = str(row.get("chain") or "")
        if name not in walkers:
            walkers[name] = ChainWalker(name, filtered=header.filtered, checkpoints=points)
        walkers[name].feed(row)
    for point in points:
        # A chain the checkpoint names that the (complete) export lacks is truncated to nothing.
        if point.chain not in walkers and not header.filtered:
            walkers[point.chain] = ChainWalker(point.chain, checkpoints=points)
    return header.filtered, [walkers[name].finish() for name in sorted(walkers)]


def read_checkpoints(lines: Iterable[str]) -> Iterator[Checkpoint]:
    """Checkpoints as `audit_checkpoint` prints them (one JSON object a line; others skipped)."""
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        data: dict[str, Any] = json.loads(line)
        yield Checkpoint(chain=str(data["chain"]), seq=int(data["seq"]), hash=str(data["hash"]))
