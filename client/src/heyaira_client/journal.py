"""The local idempotency journal: SQLite under the state directory.

A keyed write (memory_add, task_create) is written here, with its key, and committed BEFORE the
request is sent. If the process dies or the answer is lost, the same write run again finds its
unfinished entry (same endpoint, project, operation and payload) and sends the same key, so the
server replays the first result instead of adding a second row. A task_update has no server-side
key; its entry records what was asked so that a lost answer is resolved by reading the task
back (HeyAira.task_update), never by sending the update blindly again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heyaira_client.paths import private_dir, state_dir

PENDING, DONE, FAILED = "pending", "done", "failed"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,          -- resource | instance | project id
    operation TEXT NOT NULL,
    fingerprint TEXT NOT NULL,    -- SHA-256 of the canonical payload (never the payload)
    key TEXT NOT NULL,
    target TEXT,                  -- task_update: the task id
    expected_version INTEGER,     -- task_update: the version it was sent against
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    finished_at REAL,
    result_id TEXT
);
CREATE INDEX IF NOT EXISTS entries_pending ON entries (scope, operation, fingerprint, status);
"""


@dataclass(frozen=True)
class Entry:
    id: int
    key: str
    attempts: int  # sends before this one: > 0 means an earlier attempt's answer never arrived

    @property
    def resumed(self) -> bool:
        return self.attempts > 0


def fingerprint(payload: dict[str, Any]) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Journal:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "journal.sqlite3"
        private_dir(self.path.parent)
        with self._connect() as db:
            db.executescript(_SCHEMA)
        self.path.chmod(0o600)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # One short connection per step: several CLI processes may share the file.
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # an entry must survive a crash right after
            yield db
        finally:
            db.close()

    def begin(
        self,
        *,
        scope: str,
        operation: str,
        payload: dict[str, Any],
        key: str | None = None,
        target: str | None = None,
        expected_version: int | None = None,
    ) -> Entry:
        """The unfinished entry for this write, or a new one; committed before returning."""
        digest = fingerprint(payload)
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")  # two processes resuming one write agree on its key
            row = db.execute(
                "SELECT id, key, attempts FROM entries WHERE scope = ? AND operation = ? AND "
                "fingerprint = ? AND status = ? AND (? IS NULL OR key = ?) "
                "ORDER BY id DESC LIMIT 1",
                (scope, operation, digest, PENDING, key, key),
            ).fetchone()
            if row is None:
                new_key = key or f"heyaira-{uuid.uuid4().hex}"
                cursor = db.execute(
                    "INSERT INTO entries (scope, operation, fingerprint, key, target, "
                    "expected_version, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        *(scope, operation, digest, new_key, target, expected_version),
                        *(PENDING, time.time()),
                    ),
                )
                row = (cursor.lastrowid, new_key, 0)
            db.execute("UPDATE entries SET attempts = attempts + 1 WHERE id = ?", (row[0],))
            db.execute("COMMIT")
        return Entry(id=int(row[0]), key=str(row[1]), attempts=int(row[2]))

    def finish(self, entry: Entry, *, result_id: str | None = None) -> None:
        self._close(entry, DONE, result_id)

    def fail(self, entry: Entry) -> None:
        """The server refused it for good (validation, conflict...): never resume it."""
        self._close(entry, FAILED, None)

    def _close(self, entry: Entry, status: str, result_id: str | None) -> None:
        with self._connect() as db:
            db.execute(
                "UPDATE entries SET status = ?, finished_at = ?, result_id = ? WHERE id = ?",
                (status, time.time(), result_id, entry.id),
            )

    def unfinished_version(self, scope: str, operation: str, target: str) -> int | None:
        """The expected_version of the newest unfinished write to `target`: a rerun sends the
        same one again (so the journal recognises it) instead of re-reading a version that the
        lost write itself may have moved on."""
        with self._connect() as db:
            row = db.execute(
                "SELECT expected_version FROM entries WHERE scope = ? AND operation = ? AND "
                "target = ? AND status = ? ORDER BY id DESC LIMIT 1",
                (scope, operation, target, PENDING),
            ).fetchone()
        return None if row is None else int(row[0])

    def pending(self, scope: str | None = None) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, scope, operation, key, attempts, created_at FROM entries "
                "WHERE status = ? AND (? IS NULL OR scope = ?) ORDER BY id",
                (PENDING, scope, scope),
            ).fetchall()
        names = ("id", "scope", "operation", "key", "attempts", "created_at")
        return [dict(zip(names, row, strict=True)) for row in rows]
