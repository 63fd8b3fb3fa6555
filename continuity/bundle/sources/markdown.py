"""A folder of Markdown notes, basic-memory style: each `*.md` file (subfolders too) opens with
YAML front matter between `---` lines (`title`, `type`, `tags`, `permalink`...), then the body.

A file becomes a note, or a decision when its `type` is `decision` (its `rationale` and `source`
come from the front matter). The title comes from the front matter, the tags are kept in the
content's first line. A file without front matter or title, a decision without rationale or
source, or a body past the memory size limit is reported and not mapped.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from continuity.bundle.sources.mapping import MappedMemory, Mapping, fingerprint
from continuity.models import MEMORY_CONTENT_MAX


def read(path: Path) -> Mapping:
    files = sorted(path.rglob("*.md"))
    mapping = Mapping(
        tool="markdown",
        fingerprint=fingerprint(
            [str(file.relative_to(path)).encode() + b"\0" + file.read_bytes() for file in files]
        ),
    )
    for file in files:
        name = str(file.relative_to(path))
        try:
            memory = _memory(file, name)
        except ValueError as error:
            mapping.unmapped.append(f"{name}: {error}")
            continue
        mapping.memories.append(memory)
        mapping.mapped.append(f"{name} -> {memory.kind}: {memory.title}")
    return mapping


def _memory(file: Path, name: str) -> MappedMemory:
    front, body = _split(file.read_text(encoding="utf-8"))
    title = str(front.get("title") or "").strip()
    if not title:
        raise ValueError("no title in its front matter")
    tags = front.get("tags") or []
    if isinstance(tags, str):
        tags = [tag.strip() for tag in tags.split(",") if tag.strip()]
    content = (f"Tags: {', '.join(map(str, tags))}\n\n" if tags else "") + body.strip()
    if not content:
        raise ValueError("an empty note")
    if len(content) > MEMORY_CONTENT_MAX:
        raise ValueError(f"{len(content)} characters; a memory holds {MEMORY_CONTENT_MAX}")
    kind = "decision" if str(front.get("type", "")).lower() == "decision" else "note"
    rationale, source = str(front.get("rationale") or ""), str(front.get("source") or "")
    if kind == "decision" and not (rationale and source):
        raise ValueError("a decision needs rationale and source in its front matter")
    created = front.get("created") or front.get("date")
    return MappedMemory(
        kind=kind,
        title=title,
        content=content,
        rationale=rationale,
        source=source or f"markdown {name}",
        created_at=_time(created),
    )


def _split(text: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        raise ValueError("no front matter")
    _, _, rest = text.partition("\n")
    front, marker, body = rest.partition("\n---")
    if not marker:
        raise ValueError("its front matter does not end")
    try:
        data = yaml.safe_load(front) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"its front matter is not YAML ({error})") from None
    if not isinstance(data, dict):
        raise ValueError("its front matter is not a mapping")
    return data, body.partition("\n")[2]


def _time(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    return None
