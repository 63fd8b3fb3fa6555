"""Audit exports that verify offline: JSON Lines or CSV, streamed in constant memory.

Public (the web UI uses these; keep them stable):
- `export_jsonl(events, *, filtered=True)` and `export_csv(events, *, filtered=True)`: iterators
  of text lines (each ends with a newline) for any AuditEvent queryset the caller has already
  filtered (by project, operation, time...). Rows come in chain order (chain, position), read
  in batches, so memory stays constant however many there are. `filtered=False` says the export
  holds whole chains: `verify_audit --file` then treats a skipped position as a missing event;
  with `filtered=True` a skipped position is a gap from the filter and only the links between
  consecutive positions are checked. An edited row is detected either way.
- `read_export(lines)`: the header and the rows of an export (JSONL or CSV), as `verify_audit
  --file` reads them, without the database.

The format (version 1): every field of audit.chain.FIELDS in its canonical spelling plus `seq`,
`prev_hash`, `digest`, `hash`, one event per line.
JSONL: a first line `{"format": "heyaira-audit-export", "version": 1, "filtered": true|false}`,
then one JSON object per event.
CSV: a plain CSV whose first line is its header, so that any CSV reader (csv.DictReader, a
spreadsheet) takes the column names from it: the columns above, then `export`, which says on
every row whether the file holds whole chains (`complete`) or a filtered set (`filtered`); then
one row per event (an empty user_id or project_id is null). Files written before this header
(a first line `# heyaira-audit-export version=1 filtered=...`) are still read.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import BooleanField, Max, Min, QuerySet
from django.db.models.expressions import RawSQL

from audit import chain
from audit.models import AuditEvent

FORMAT = "heyaira-audit-export"
VERSION = 1
COLUMNS: tuple[str, ...] = (*chain.FIELDS, *chain.CHAIN_FIELDS)
COMPLETE, FILTERED = "complete", "filtered"
CSV_COLUMNS: tuple[str, ...] = (*COLUMNS, "export")
BATCH = 2000
CHAIN, SEQ = COLUMNS.index("chain"), COLUMNS.index("seq")


@dataclass(frozen=True)
class ExportHeader:
    format: str
    version: int
    filtered: bool


def export_rows(events: QuerySet[AuditEvent], *, batch: int = BATCH) -> Iterator[dict[str, Any]]:
    """The events as canonical dicts, in chain order, read `batch` rows at a time (keyset
    pagination on (chain, seq): no offset, no server-side cursor, constant memory)."""
    # An event without a position exists only in a tampered table: verify_audit names it.
    # (chain, seq) is unique (audit_chain_position), so it alone orders the rows.
    ordered = events.filter(seq__isnull=False).order_by("chain", "seq").values_list(*COLUMNS)

    def after(last: tuple[Any, ...]) -> QuerySet[AuditEvent, tuple[Any, ...]]:
        # A row comparison, not an OR of columns: it is the index's range condition, so a
        # batch reads its own rows only (written as an OR, each batch scanned the chain from
        # its start: 1.8 s a batch, 200,000 rows deep, against 11 ms).
        position = (last[CHAIN], last[SEQ])
        return ordered.filter(RawSQL('("chain", "seq") > (%s, %s)', position, BooleanField()))

    return _batches(ordered, after, batch)


def chain_rows(name: str, *, batch: int = BATCH) -> Iterator[dict[str, Any]]:
    """export_rows for one whole chain, as verify_audit walks it."""
    # Ranges of positions, `chain = c AND seq > s AND seq <= s + batch`: each batch reads its
    # own rows only, whatever plan PostgreSQL picks. (Keyset `seq > s ... LIMIT n` made it scan
    # the whole rest of the chain for every batch when the table had no statistics yet, after
    # a restore or a bulk load: 1,000,000 events took 227 s; export_rows' row comparison beside
    # `chain = c` made every batch start at the chain's first entry.)
    events = AuditEvent.objects.filter(chain=name, seq__isnull=False)
    ordered = events.order_by("seq").values_list(*COLUMNS)
    top = events.aggregate(top=Max("seq"))["top"]
    if top is None:
        return
    low: int | None = None  # the first range has no lower bound: a tampered seq may be <= 0
    upper = batch
    while True:
        page = ordered.filter(seq__lte=upper)
        rows = list(page if low is None else page.filter(seq__gt=low))
        for values in rows:
            yield _canonical(dict(zip(COLUMNS, values, strict=True)))
        if upper >= top:
            return
        low, upper = upper, upper + batch
        if not rows:  # a gap (events missing, or a position far ahead): go to the next one
            following = events.filter(seq__gt=low).aggregate(next=Min("seq"))["next"]
            low, upper = following - 1, following - 1 + batch


def _batches(
    first: QuerySet[AuditEvent, tuple[Any, ...]],
    after: Callable[[tuple[Any, ...]], QuerySet[AuditEvent, tuple[Any, ...]]],
    batch: int,
) -> Iterator[dict[str, Any]]:
    page = first
    while True:
        rows = list(page[:batch])
        for values in rows:
            yield _canonical(dict(zip(COLUMNS, values, strict=True)))
        if len(rows) < batch:
            return
        page = after(rows[-1])


def _canonical(row: dict[str, Any]) -> dict[str, Any]:
    """A row as read from the database, spelled canonically. Text columns come back as text,
    which the encoding spells as it is; only the typed fields need spelling (a million rows:
    spelling all 19 fields was a quarter of verify_audit's time)."""
    for name in chain.TYPED_FIELDS:
        row[name] = chain.canonical_value(name, row[name])
    for name in ("prev_hash", "digest", "hash"):
        row[name] = row[name] or ""
    return row


def export_jsonl(events: QuerySet[AuditEvent], *, filtered: bool = True) -> Iterator[str]:
    header = {"format": FORMAT, "version": VERSION, "filtered": filtered}
    yield json.dumps(header) + "\n"
    for row in export_rows(events):
        yield json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_csv(events: QuerySet[AuditEvent], *, filtered: bool = True) -> Iterator[str]:
    scope = FILTERED if filtered else COMPLETE
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")

    def line(values: Iterable[Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(values)
        return buffer.getvalue()

    yield line(CSV_COLUMNS)
    for row in export_rows(events):
        yield line([*("" if row[name] is None else row[name] for name in COLUMNS), scope])


def read_export(lines: Iterable[str]) -> tuple[ExportHeader, Iterator[dict[str, Any]]]:
    """An export's header and its rows (canonical dicts). Raises ValueError on a file that is
    not an export of this format."""
    iterator = iter(lines)
    first = next(iterator, "")
    if first.strip().startswith("{"):
        header = _json_header(first.strip())
        return header, (json.loads(line) for line in iterator if line.strip())
    if first.startswith(f"# {FORMAT} "):  # a CSV written before the plain header
        return _csv_header(first.strip()), _csv_rows(iterator)
    if next(csv.reader([first]), []) == list(CSV_COLUMNS):
        return _plain_csv(itertools.chain([first], iterator))
    raise ValueError("not a HeyAira audit export (no header line)")


def _plain_csv(lines: Iterator[str]) -> tuple[ExportHeader, Iterator[dict[str, Any]]]:
    """A plain CSV: whether it is filtered is on its rows (its first row says; every row must
    agree). One without rows claims nothing and is read as filtered."""
    rows = _csv_rows(lines)
    first = next(rows, None)
    if first is None:
        return ExportHeader(FORMAT, VERSION, True), iter(())
    scope = first["export"]
    if scope not in (COMPLETE, FILTERED):
        raise ValueError(f"export column: {scope!r} is neither {COMPLETE} nor {FILTERED}")

    def checked() -> Iterator[dict[str, Any]]:
        for row in itertools.chain([first], rows):
            if row.pop("export") != scope:
                raise ValueError("export column: rows disagree on complete or filtered")
            yield row

    return ExportHeader(FORMAT, VERSION, scope == FILTERED), checked()


def _json_header(line: str) -> ExportHeader:
    data = json.loads(line)
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"not a version {VERSION} {FORMAT} file")
    return ExportHeader(FORMAT, VERSION, bool(data.get("filtered", True)))


def _csv_header(line: str) -> ExportHeader:
    words = dict(word.split("=", 1) for word in line.split()[2:] if "=" in word)
    if words.get("version") != str(VERSION):
        raise ValueError(f"not a version {VERSION} {FORMAT} file")
    return ExportHeader(FORMAT, VERSION, words.get("filtered", "true") != "false")


def _csv_rows(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    # The csv module reads quoted newlines across lines itself.
    for record in csv.DictReader(lines):
        row: dict[str, Any] = dict(record)
        for name in ("user_id", "project_id"):
            row[name] = row.get(name) or None
        row["seq"] = int(row["seq"]) if row.get("seq") else None
        if row["user_id"] is not None:
            row["user_id"] = int(row["user_id"])
        yield row
