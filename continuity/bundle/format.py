"""The bundle's lines: canonical JSON, a seal on every line, a trailer with a digest.

Line 1 is the header, then one line per record, then the trailer (docs/bundle.md):

- every line but the trailer is `{"seal":"<hex>",` followed by the record's canonical JSON
  without its opening brace (sorted keys, no spaces, UTF-8, times as RFC 3339 UTC with
  microseconds). The seal is SHA-256 over `previous seal + "\\n" + canonical JSON`; the header
  starts from "" and so do the records, so a record's line does not depend on which instance
  exported it (the header names the instance);
- the trailer is `{"digest":"sha256:<hex>","lines":N,"record":"trailer"}`: SHA-256 over every
  byte before it, and the number of lines before it.

A seal names the first line that was edited, removed or moved; the trailer's digest covers the
whole file and its absence says the file was cut short.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

FORMAT = "heyaira-project"
VERSION = 1
HEADER, TRAILER = "header", "trailer"

_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_SEALED = re.compile(rb'\{"seal":"([0-9a-f]{64})",(.+\})\n?\Z', re.DOTALL)


def canonical(document: dict[str, Any]) -> bytes:
    return _JSON.encode(document).encode()


def encode_time(value: dt.datetime | None) -> str | None:
    """One spelling of every time: RFC 3339 UTC with microseconds."""
    if value is None:
        return None
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def decode_time(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)


def seal_of(previous: str, body: bytes) -> str:
    # Hashed in two parts: a million bodies of a kilobyte each are not copied only to be hashed.
    hasher = hashlib.sha256(previous.encode() + b"\n")
    hasher.update(body)
    return hasher.hexdigest()


class BundleError(ValueError):
    """A bundle that cannot be imported; `line` is the first bad line (1-based), if any."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class Writer:
    """Seals lines one after another and writes the trailer; keeps only the running hashes."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._previous = ""
        self._lines = 0

    def header(self, document: dict[str, Any]) -> bytes:
        line = self.sealed(canonical({**document, "record": HEADER}))
        self._previous = ""  # records seal from the start again: see the module's docstring
        return line

    def sealed(self, body: bytes) -> bytes:
        """The line of a record given as its canonical JSON, "record" key included."""
        seal = seal_of(self._previous, body)
        self._previous = seal
        line = b"".join((b'{"seal":"', seal.encode(), b'",', memoryview(body)[1:], b"\n"))
        self._digest.update(line)
        self._lines += 1
        return line

    def trailer(self) -> bytes:
        document = {"digest": self.digest, "lines": self._lines, "record": TRAILER}
        return canonical(document) + b"\n"

    @property
    def digest(self) -> str:
        return "sha256:" + self._digest.hexdigest()


@dataclass(frozen=True)
class Line:
    number: int  # 1-based
    record: dict[str, Any]


class Reader:
    """Checks a bundle while reading it: each line's seal as it comes, the trailer at the end.

    Records are handed out before the trailer is seen, so a caller that writes them must do so
    in a transaction it rolls back when reading raises (project_import does)."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self._lines = iter(lines)
        self._digest = hashlib.sha256()
        self.header: dict[str, Any] = {}
        self.digest = ""
        self.count = 0

    def read_header(self) -> dict[str, Any]:
        raw = next(self._lines, b"")
        if not raw:
            raise BundleError("the file is empty: no header", line=1)
        header = self._open(raw, 1, "")
        if header.get("format") != FORMAT or header.get("record") != HEADER:
            raise BundleError(f"not a {FORMAT} bundle: the first line is not its header", line=1)
        version = header.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise BundleError(
                f"the bundle is format version {version}; this server reads version {VERSION}"
                " and older: upgrade HeyAira to import it",
                line=1,
            )
        header.pop("_seal")
        self.header = header
        self.count = 1
        return header

    def records(self) -> Iterator[Line]:
        previous = ""
        number = 1
        for raw in self._lines:
            number += 1
            if raw.startswith(b'{"digest":'):
                self._close(raw, number)
                return
            record = self._open(raw, number, previous)
            previous = record.pop("_seal")
            self.count = number
            yield Line(number, record)
        raise BundleError(
            f"the trailer is missing: the file ends after line {number} (cut short?)",
            line=number + 1,
        )

    def _open(self, raw: bytes, number: int, previous: str) -> dict[str, Any]:
        match = _SEALED.match(raw)
        if match is None:
            raise BundleError("not a sealed bundle line", line=number)
        seal, rest = match.group(1).decode(), b"{" + match.group(2)
        if seal_of(previous, rest) != seal:
            raise BundleError(
                "its seal does not match: this line, or one before it, was edited, removed or "
                "moved",
                line=number,
            )
        self._digest.update(raw if raw.endswith(b"\n") else raw + b"\n")
        try:
            record: dict[str, Any] = json.loads(rest)
        except ValueError:
            raise BundleError("not JSON", line=number) from None
        record["_seal"] = seal
        return record

    def _close(self, raw: bytes, number: int) -> None:
        try:
            trailer = json.loads(raw)
        except ValueError:
            raise BundleError("the trailer is not JSON", line=number) from None
        digest = "sha256:" + self._digest.hexdigest()
        if trailer.get("record") != TRAILER or trailer.get("lines") != number - 1:
            raise BundleError(
                f"the trailer counts {trailer.get('lines')} lines before it; there are "
                f"{number - 1}",
                line=number,
            )
        if trailer.get("digest") != digest:
            raise BundleError(
                "the trailer's digest does not match the lines before it", line=number
            )
        if next(self._lines, None) is not None:
            raise BundleError("lines after the trailer", line=number + 1)
        self.digest = digest
