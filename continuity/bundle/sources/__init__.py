"""Importers from other tools' files: each reads its tool's format into a `Mapping` (what becomes
which task or memory, and what cannot be mapped), which `apply` writes as a new project."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from continuity.bundle.sources import beads, claude_code, markdown
from continuity.bundle.sources.mapping import Mapping

READERS: dict[str, Callable[[Path], Mapping]] = {
    "beads": beads.read,
    "claude-code-tasks": claude_code.read,
    "markdown": markdown.read,
}
