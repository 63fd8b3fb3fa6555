"""Input rules shared by every app's pydantic input models."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict


def storable(value: str) -> str:
    """Reject what PostgreSQL text cannot hold (NUL, unpaired surrogates): never a 500."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text") from None
    return value


def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


# Characters Git forbids in ref names (git check-ref-format).
_REF_FORBIDDEN = re.compile(r"[\x00-\x20~^:?*\[\\\x7f]")


def branch_name(value: str) -> str:
    parts = value.split("/")
    if (
        not value
        or _REF_FORBIDDEN.search(value)
        or any(bad in value for bad in ("..", "@{", "//"))
        or value.startswith(("/", "-"))
        or value.endswith(("/", ".", ".lock"))
        or value == "@"
        or any(part.startswith(".") for part in parts)
    ):
        raise ValueError("is not a valid Git branch name")
    return value


# Prefixes of well-known access tokens: such a value must never be stored as a reference.
_TOKEN_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "hak_")


def not_a_token(value: str) -> str:
    if value.lower().startswith(_TOKEN_PREFIXES):
        raise ValueError("looks like an access token; HeyAira stores references, never tokens")
    return value


Text = Annotated[str, AfterValidator(storable)]
RequiredText = Annotated[str, AfterValidator(storable), AfterValidator(not_blank)]
# storable first: a branch is stored inside a JSON column, where PostgreSQL refuses an unpaired
# surrogate just as it does in text.
BranchName = Annotated[str, AfterValidator(storable), AfterValidator(branch_name)]

# Printable ASCII without spaces: UUIDs, ULIDs, "session-2026-11-29T10:00" and the like.
PRINTABLE_ID_PATTERN = r"^[\x21-\x7e]+$"


class Input(BaseModel):
    """Base of every operation's input: unknown fields are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
