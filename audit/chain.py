"""The canonical encoding of an audit event and the hashes of its chain: the one definition.

Used when a row is written (the recorder computes `digest`), by the database triggers (which
link each row to its chain: `hash = chain_hash(prev_hash, seq, digest)`), and by verification,
online and offline (`verify_audit --file` runs this module without the database). Plain Python,
no Django: changing anything here breaks every stored chain, so version 1 stays as it is.

- `digest` = SHA-256 over the canonical JSON of the event's own fields (FIELDS, in that order:
  sorted keys, no spaces, UTF-8; times as RFC 3339 UTC with microseconds; ids as text).
- `hash` = SHA-256 over `prev_hash + "\\n" + seq + "\\n" + digest` (hex, as text), with
  `prev_hash` "" for the first event of a chain. PostgreSQL computes it with sha256() and
  SQLite with the function the audit app registers; both spell it exactly like `chain_hash`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

ENCODING_VERSION = 1
# Project-less security events (sign-in failures, client registrations) form this chain.
SECURITY_CHAIN = "security"

# The event's own fields, covered by its digest. The chain fields (chain position, hashes)
# are covered through `hash`; `chain` (one of its project's chains, below) is covered too.
FIELDS: tuple[str, ...] = (
    "id",
    "occurred_at",
    "chain",
    "request_id",
    "actor_type",
    "actor_id",
    "actor_label",
    "user_id",
    "client_id",
    "credential_kind",
    "credential_fingerprint",
    "resource",
    "instance",
    "project_id",
    "operation",
    "target_type",
    "target_id",
    "outcome",
    "error_code",
)
CHAIN_FIELDS: tuple[str, ...] = ("seq", "prev_hash", "digest", "hash")


def chain_of(project_id: object, generation: int = 1) -> str:
    """A chain of a project, or the security chain (no project). A project's first chain is
    named by its id; an imported project keeps the chains its bundle brought (archived: their
    hashes cover their names) and writes to a new one, `<id>.<generation>` (the generation after
    the bundle's last)."""
    if project_id in (None, ""):
        return SECURITY_CHAIN
    name = str(uuid.UUID(str(project_id)))
    return name if generation == 1 else f"{name}.{generation}"


def generation_of(name: str, project_id: object) -> int | None:
    """Which of its project's chains `name` is (1 for the first), or None when it is none of
    them: an event's chain must be one of its project's."""
    first = chain_of(project_id)
    if name == first:
        return 1
    if first == SECURITY_CHAIN:
        return None
    base, _, number = name.rpartition(".")
    if base != first or not number.isdigit() or str(int(number)) != number or int(number) < 2:
        return None
    return int(number)


def live_chain(project: Any) -> str:
    """The chain a project's new events go to: its `audit_chain` when it names one (an imported
    project), else its first chain (its id)."""
    return str(getattr(project, "audit_chain", "") or "") or chain_of(project.pk)


def encode_time(value: dt.datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("audit times are aware datetimes")
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def decode_time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)


# The fields stored as other than text; every other field is spelled as the database holds it.
TYPED_FIELDS = ("id", "occurred_at", "user_id", "project_id")
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def canonical_value(name: str, value: Any) -> str | int | None:
    """A field's value as the encoding spells it (and exports carry it). Fast for values that
    are spelled so already: verification runs this for every field of every event."""
    if value is None:
        return None
    if name not in TYPED_FIELDS:
        if type(value) is str:
            return value
        # TextChoices and enums are str subclasses: their value, not their repr.
        return str(getattr(value, "value", value))
    if name == "occurred_at":
        return encode_time(value) if isinstance(value, dt.datetime) else str(value)
    if value == "":
        return None
    if name == "user_id":
        return int(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    text = str(value)
    return text if _CANONICAL_UUID.fullmatch(text) else str(uuid.UUID(text))


def canonical_fields(fields: Mapping[str, Any]) -> dict[str, str | int | None]:
    return {name: canonical_value(name, fields.get(name)) for name in FIELDS}


_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def encode(fields: Mapping[str, Any]) -> bytes:
    """The canonical bytes of an event's own fields (version 1)."""
    return encode_canonical(canonical_fields(fields))


def encode_canonical(values: Mapping[str, Any]) -> bytes:
    """`encode` for values spelled canonically already (as `canonical_fields` returns them):
    verification of a million events skips spelling each field a second time."""
    document: dict[str, Any] = {"v": ENCODING_VERSION}
    for name in FIELDS:
        document[name] = values.get(name)
    return _JSON.encode(document).encode()


def digest(fields: Mapping[str, Any]) -> str:
    return hashlib.sha256(encode(fields)).hexdigest()


def digest_canonical(values: Mapping[str, Any]) -> str:
    return hashlib.sha256(encode_canonical(values)).hexdigest()


def chain_hash(prev_hash: str, seq: int, event_digest: str) -> str:
    return hashlib.sha256(f"{prev_hash}\n{seq}\n{event_digest}".encode()).hexdigest()
