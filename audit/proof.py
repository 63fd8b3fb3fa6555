"""Checking chains, event by event, without the database: the one walker that `verify_audit`
runs over the database and over an export file alike.

Feed a chain's events in order (by position); the walker names what is wrong:
- `edited`: an event whose fields no longer give its digest, or whose hash is not the hash of
  its link (its fields, position or links were changed);
- `inserted`: an event that does not link to the one before it, or a second event at a
  position, or one without a position;
- `missing`: positions skipped (in a complete chain), or the chain ending before its head;
- `truncated`: the chain ending before a stored checkpoint (or the checkpoint's event changed).
In a filtered export skipped positions are gaps from the filter, not errors; every event's own
hashes and every link between consecutive positions are still checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from audit import chain

MAX_PROBLEMS = 20  # per chain: the first one is what matters, a few more help the diagnosis


@dataclass(frozen=True)
class Problem:
    chain: str
    kind: str  # edited | inserted | missing | truncated
    seq: int | None
    event_id: str
    detail: str

    def __str__(self) -> str:
        where = f"seq {self.seq}" if self.seq is not None else "no position"
        event = f" (event {self.event_id})" if self.event_id else ""
        return f"chain {self.chain}: {self.kind} at {where}{event}: {self.detail}"


@dataclass(frozen=True)
class Checkpoint:
    """A chain's head as it was printed by `audit_checkpoint` and kept elsewhere."""

    chain: str
    seq: int
    hash: str


@dataclass
class ChainReport:
    chain: str
    events: int = 0
    # Every event from the first up to here is verified, with no problem before it.
    verified_seq: int = 0
    verified_hash: str = ""
    last_seq: int = 0
    last_hash: str = ""
    filtered_gaps: list[tuple[int, int]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first_problem(self) -> Problem | None:
        return self.problems[0] if self.problems else None


def event_intact(row: Mapping[str, Any], *, canonical: bool = False) -> tuple[bool, bool]:
    """(its fields give its digest, its hash is the hash of its link): per event, no neighbour.
    canonical: the row's fields are spelled canonically already (read by audit.export), so
    they are not spelled again; a file's rows are (they may carry any spelling)."""
    own = chain.digest_canonical(row) if canonical else chain.digest(row)
    digest_ok = own == row.get("digest")
    seq = row.get("seq")
    hash_ok = seq is not None and chain.chain_hash(
        str(row.get("prev_hash") or ""), int(seq), str(row.get("digest") or "")
    ) == row.get("hash")
    return digest_ok, hash_ok


class ChainWalker:
    def __init__(
        self,
        name: str,
        *,
        filtered: bool = False,
        checkpoints: Iterable[Checkpoint] = (),
        canonical: bool = False,
    ) -> None:
        """canonical: every row fed is spelled canonically (see event_intact)."""
        self.report = ChainReport(chain=name)
        self.filtered = filtered
        self.canonical = canonical
        self.checkpoints = {point.seq: point for point in checkpoints if point.chain == name}
        self._clean = True  # no problem seen yet: verified_seq may advance
        self._last_id = ""
        self._hash_before_last = ""

    def _problem(self, kind: str, seq: int | None, event_id: str, detail: str) -> None:
        self._clean = False
        if len(self.report.problems) < MAX_PROBLEMS:
            self.report.problems.append(Problem(self.report.chain, kind, seq, event_id, detail))

    def feed(self, row: Mapping[str, Any]) -> None:
        report = self.report
        report.events += 1
        event_id = str(row.get("id") or "")
        seq = row.get("seq")
        if seq is None:
            self._problem("inserted", None, event_id, "the event has no place in the chain")
            return
        seq = int(seq)
        self._check_place(row, seq, event_id)
        self._check_own(row, seq, event_id)
        point = self.checkpoints.get(seq)
        if point is not None and point.hash != row.get("hash"):
            self._problem("truncated", seq, event_id, "not the event the checkpoint names")
        if self._clean and seq == report.verified_seq + 1:
            report.verified_seq, report.verified_hash = seq, str(row.get("hash"))
        if seq > report.last_seq:
            self._hash_before_last = report.last_hash
            report.last_seq, report.last_hash = seq, str(row.get("hash"))
            self._last_id = event_id

    def _check_own(self, row: Mapping[str, Any], seq: int, event_id: str) -> None:
        digest_ok, hash_ok = event_intact(row, canonical=self.canonical)
        if not digest_ok:
            self._problem("edited", seq, event_id, "its fields do not match its digest")
        elif not hash_ok:
            self._problem("edited", seq, event_id, "its hash does not match its place and links")
        if chain.generation_of(str(row.get("chain")), row.get("project_id")) is None:
            self._problem("edited", seq, event_id, "its chain is not its project's")

    def _check_place(self, row: Mapping[str, Any], seq: int, event_id: str) -> None:
        report = self.report
        expected = report.last_seq + 1
        if seq < expected:
            self._problem("inserted", seq, event_id, "a second event at this place")
        elif seq > expected:
            if self.filtered:
                report.filtered_gaps.append((expected, seq - 1))
            else:
                self._problem("missing", expected, "", f"events {_span(expected, seq - 1)} absent")
        elif row.get("prev_hash") != report.last_hash:
            if seq > 2 and row.get("prev_hash") == self._hash_before_last:
                # It links to the event two back: the one in between was put there.
                detail = "the event after it links past it"
                self._problem("inserted", seq - 1, self._last_id, detail)
                if report.verified_seq == seq - 1:
                    report.verified_seq, report.verified_hash = seq - 2, self._hash_before_last
            else:
                self._problem("inserted", seq, event_id, "it does not link to the event before it")

    def finish(self, head: tuple[int, str] | None = None) -> ChainReport:
        """head: the database's (seq, last hash) for this chain, when checking the database."""
        report = self.report
        if head is not None:
            self._check_head(*head)
        for point in sorted(self.checkpoints.values(), key=lambda p: p.seq):
            if point.seq > report.last_seq and not self.filtered:
                self._problem(
                    "truncated",
                    report.last_seq + 1,
                    "",
                    f"the chain ends at {report.last_seq}; a checkpoint names {point.seq}",
                )
        return report

    def _check_head(self, head_seq: int, head_hash: str) -> None:
        report = self.report
        if head_seq > report.last_seq:
            span = _span(report.last_seq + 1, head_seq)
            detail = f"events {span} absent; the head is at {head_seq}"
            self._problem("missing", report.last_seq + 1, "", detail)
        elif head_seq < report.last_seq:
            self._problem(
                "inserted", head_seq + 1, "", f"events past the head ({head_seq}) of the chain"
            )
        elif head_hash != report.last_hash:
            self._problem("edited", head_seq, "", "the last event is not the one the head names")


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"
