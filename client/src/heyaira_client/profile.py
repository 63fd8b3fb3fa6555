"""Identity profiles: which HeyAira endpoint a harness may write to, and with which credential.

A profile pins the resource (the canonical MCP URL), the instance and the project that
server_identity must report; anything else is refused before a write is sent. The file is TOML:

    default = "demo"

    [profiles.demo]
    url = "http://127.0.0.1:8000/mcp"      # where to connect
    resource = "http://127.0.0.1:8000/mcp" # what server_identity must say (default: url)
    instance = "local"
    project = "demo"                       # the project's slug or id
    credential = "env:HEYAIRA_KEY"         # env:NAME, file:PATH or oauth
    agent = "claude-code"                  # whose running summary this harness keeps
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from heyaira_client.errors import CredentialMissing, ProfileError
from heyaira_client.paths import profiles_path, write_private

PROFILE_VARIABLE = "HEYAIRA_PROFILE"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_AGENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,99}$")


@dataclass(frozen=True)
class SummarySettings:
    """When the running summary is updated, and what the summarizer gets (docs/architecture.md)."""

    every_person_turns: int = 8  # update after this many person turns since the last version
    max_age_seconds: float = 1800.0  # ...or when the last version is older than this
    budget_chars: int = 24_000  # the newest turns handed to the summarizer, in characters
    max_chars: int = 12_000  # the server's cap on a body


@dataclass(frozen=True)
class Profile:
    name: str
    url: str
    instance: str
    project: str
    credential: str
    resource: str = ""
    agent: str = "agent"
    mode: Literal["auto", "legacy"] = "auto"
    summarizer: tuple[str, ...] = ()
    summary: SummarySettings = field(default_factory=SummarySettings)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ProfileError(f"profile name {self.name!r}: letters, digits, . _ - only")
        if not self.url.startswith(("http://", "https://")):
            raise ProfileError(f"profile {self.name}: url must be http(s)://...")
        if not self.resource:
            object.__setattr__(self, "resource", self.url)
        for name in ("instance", "project"):
            if not getattr(self, name):
                raise ProfileError(f"profile {self.name}: {name} is required")
        if not _AGENT.match(self.agent):
            raise ProfileError(f"profile {self.name}: agent {self.agent!r} is not a valid name")
        if self.mode not in ("auto", "legacy"):
            raise ProfileError(f"profile {self.name}: mode is auto or legacy")
        credential_source(self)  # fails early on a malformed credential

    @property
    def project_is_id(self) -> bool:
        try:
            uuid.UUID(self.project)
        except ValueError:
            return False
        return True

    def to_toml(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "url": self.url,
            "resource": self.resource,
            "instance": self.instance,
            "project": self.project,
            "credential": self.credential,
            "agent": self.agent,
            "mode": self.mode,
        }
        if self.summarizer:
            data["summarizer"] = list(self.summarizer)
        defaults = SummarySettings()
        for item in fields(SummarySettings):
            value = getattr(self.summary, item.name)
            if value != getattr(defaults, item.name):
                data[f"summary_{item.name}"] = value
        return data


@dataclass(frozen=True)
class CredentialSource:
    kind: Literal["env", "file", "oauth"]
    where: str = ""

    def bearer(self) -> str:
        """The API key or static token; OAuth tokens come from the token store instead."""
        if self.kind == "env":
            value = os.environ.get(self.where, "").strip()
            if not value:
                raise CredentialMissing(f"the environment variable {self.where} is not set")
            return value
        if self.kind == "file":
            path = Path(self.where).expanduser()
            try:
                value = path.read_text(encoding="utf-8").strip()
            except OSError as error:
                raise CredentialMissing(
                    f"cannot read the credential file {path}: {error}"
                ) from None
            if not value:
                raise CredentialMissing(f"the credential file {path} is empty")
            return value
        raise CredentialMissing("an OAuth profile has no static credential")


def credential_source(profile: Profile) -> CredentialSource:
    text = profile.credential
    if text == "oauth":
        return CredentialSource("oauth")
    kind, _, where = text.partition(":")
    if kind in ("env", "file") and where:
        return CredentialSource(kind, where)  # type: ignore[arg-type]
    raise ProfileError(
        f"profile {profile.name}: credential is env:VARIABLE, file:PATH or oauth, not {text!r}"
    )


# --- the file ---------------------------------------------------------------------------------


def read_file(path: Path | None = None) -> dict[str, Any]:
    path = path or profiles_path()
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"{path}: {error}") from None


def load_profile(name: str | None = None, path: Path | None = None) -> Profile:
    """The named profile, else HEYAIRA_PROFILE, else the file's `default`, else its only one."""
    path = path or profiles_path()
    data = read_file(path)
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict) or not profiles:
        raise ProfileError(f"no profiles in {path}; add one with `heyaira profile add`")
    chosen = name or os.environ.get(PROFILE_VARIABLE) or data.get("default")
    if chosen is None and len(profiles) == 1:
        chosen = next(iter(profiles))
    if chosen is None:
        raise ProfileError(f"{path} has several profiles: name one with --profile")
    if chosen not in profiles:
        raise ProfileError(f"no profile {chosen!r} in {path}")
    return profile_from(str(chosen), profiles[chosen])


def profile_from(name: str, table: Any) -> Profile:
    if not isinstance(table, dict):
        raise ProfileError(f"profile {name} is not a table")
    summary_fields = {item.name for item in fields(SummarySettings)}
    known = {item.name for item in fields(Profile)} - {"name", "summary"}
    unknown = set(table) - known - {f"summary_{n}" for n in summary_fields}
    if unknown:
        raise ProfileError(f"profile {name}: unknown keys {sorted(unknown)}")
    summary = SummarySettings(
        **{n: table[f"summary_{n}"] for n in summary_fields if f"summary_{n}" in table}
    )
    arguments = {key: value for key, value in table.items() if key in known}
    if "summarizer" in arguments:
        arguments["summarizer"] = tuple(str(part) for part in arguments["summarizer"])
    try:
        return Profile(name=name, summary=summary, **arguments)
    except TypeError as error:
        raise ProfileError(f"profile {name}: {error}") from None


def save_profile(profile: Profile, *, make_default: bool = False, path: Path | None = None) -> Path:
    """Add or replace one profile in the file (0600: it names where credentials come from)."""
    path = path or profiles_path()
    data = read_file(path)
    profiles = dict(data.get("profiles", {}))
    profiles[profile.name] = profile.to_toml()
    default = profile.name if make_default or not data.get("default") else data["default"]
    write_private(path, _toml(default, profiles))
    return path


def _toml(default: str, profiles: dict[str, dict[str, Any]]) -> str:
    # JSON's string, number and array literals are valid TOML, so json.dumps writes the values.
    lines = [f"default = {json.dumps(default)}", ""]
    for name, table in profiles.items():
        lines.append(f"[profiles.{json.dumps(name)}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
        lines.append("")
    return "\n".join(lines)
