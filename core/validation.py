"""Input rules shared by every app's pydantic input models."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, GetJsonSchemaHandler
from pydantic_core import CoreSchema


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


# Every pattern a SchemaPattern states, and what a schema shown to a model says in its place
# (continuity.mcp.schemas): a model cannot use a 150-character character class, and the server
# checks the rule in Python whatever the schema says.
STATED_PATTERNS: dict[str, dict[str, Any]] = {}


@dataclass(frozen=True)
class SchemaPattern:
    """States a rule that a Python validator enforces as a JSON Schema `pattern`, so that the
    schema clients read says what the server accepts. It validates nothing itself.

    `instead`: the looser keywords a model-facing schema shows in place of the pattern (pairs,
    so the marker stays hashable), e.g. `(("minLength", 1),)` for "not blank"."""

    pattern: str
    instead: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        STATED_PATTERNS[self.pattern] = dict(self.instead)

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        schema = dict(handler(core_schema))
        schema["pattern"] = self.pattern
        return schema


# ECMA-262 patterns (JSON Schema's dialect) that Python's re reads the same way. An unpaired
# surrogate cannot arrive in JSON text (the parser refuses it), so NUL is what is left to say.
NO_NUL_PATTERN = r"^[^\x00]*$"
# What str.strip() strips, spelled out: JavaScript's \s is another set (it has U+FEFF and lacks
# U+001C..U+001F and U+0085), so a pattern with \s would not say what not_blank checks.
SPACE_CLASS = r"\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_BLANK_PATTERN = rf"^[^\x00]*[^{SPACE_CLASS}\x00][^\x00]*$"
# branch_name above, as one pattern: no forbidden character, no "..", "@{", "//" or "/.", no
# leading "/", "-" or ".", no trailing "/", "." or ".lock", not "@" alone. [\s\S], not ".":
# JavaScript's "." stops at U+2028 and U+2029, which a branch name may hold.
BRANCH_PATTERN = (
    r"^(?![\s\S]*(?:\.\.|@\{|//|/\.))(?![\s\S]*(?:\.lock|[/.])$)(?![/.-])(?!@$)"
    r"[^\x00-\x20~^:?*\[\\\x7f]+$"
)

Text = Annotated[str, AfterValidator(storable), SchemaPattern(NO_NUL_PATTERN)]
RequiredText = Annotated[
    str,
    AfterValidator(storable),
    AfterValidator(not_blank),
    SchemaPattern(NOT_BLANK_PATTERN, instead=(("minLength", 1),)),
]
# storable first: a branch is stored inside a JSON column, where PostgreSQL refuses an unpaired
# surrogate just as it does in text.
BranchName = Annotated[
    str, AfterValidator(storable), AfterValidator(branch_name), SchemaPattern(BRANCH_PATTERN)
]

# Printable ASCII without spaces: UUIDs, ULIDs, "session-2026-11-29T10:00" and the like.
PRINTABLE_ID_PATTERN = r"^[\x21-\x7e]+$"


class Input(BaseModel):
    """Base of every operation's input: unknown fields are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
