"""Where the client keeps its files: profiles under the config directory, the idempotency
journal, OAuth tokens and summary locks under the state directory (XDG base directories)."""

from __future__ import annotations

import os
from pathlib import Path

PROFILES_VARIABLE = "HEYAIRA_PROFILES"


def _base(variable: str, fallback: str) -> Path:
    value = os.environ.get(variable, "")
    # The XDG spec says a relative value is invalid and is to be ignored.
    root = Path(value) if value and Path(value).is_absolute() else Path.home() / fallback
    return root / "heyaira"


def state_dir() -> Path:
    """XDG_STATE_HOME/heyaira (~/.local/state/heyaira), created owner-only (0700)."""
    return private_dir(_base("XDG_STATE_HOME", ".local/state"))


def profiles_path() -> Path:
    """HEYAIRA_PROFILES, else XDG_CONFIG_HOME/heyaira/profiles.toml."""
    explicit = os.environ.get(PROFILES_VARIABLE)
    if explicit:
        return Path(explicit).expanduser()
    return _base("XDG_CONFIG_HOME", ".config") / "profiles.toml"


def private_dir(path: Path) -> Path:
    """A directory only its owner can enter; tightened if it exists with wider modes."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write a file that only its owner can read (0600), atomically: created with that mode
    (never briefly world-readable), then renamed over the old one."""
    private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)
