"""Acceptance rules for a running-summary body (docs/architecture.md, "The continuity protocol").

A summarizer model sometimes returns a refusal, an error message, or a summary followed by a
chatty paragraph addressed to the reader ("Let me know if..."). The first two must never replace
the last good version; the third is cut so the stored text stays a summary.
"""

from __future__ import annotations

import re

from continuity.models import STATE_BODY_MAX
from core.errors import ValidationError

HEADING = "# Running summary"

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_REFUSAL = re.compile(
    r"^\W*(?:i'?m sorry|i am sorry|sorry,|i can(?:no|')t|i cannot|i'?m (?:not able|unable)"
    r"|i am (?:not able|unable)|as an ai\b|unfortunately,? i\b|error\s*(?::|\d{3}\b)"
    r"|an error occurred|exception:|traceback \(most recent call last\)|rate limit exceeded"
    r"|request failed"
    r"|internal server error|\{\s*\"error\")",
    re.IGNORECASE,
)
_ADDRESSED_TO_READER = re.compile(
    r"\b(?:you|your|let me know|hope (?:this|that) helps|feel free|happy to help|i can also"
    r"|would you like|shall i)\b",
    re.IGNORECASE,
)


def clean_running_summary(body: str) -> str:
    """The body to store, or a validation_error saying what is wrong with it."""
    text = body.replace("\r\n", "\n").lstrip("\ufeff").strip()
    first_line, _, rest = text.partition("\n")
    if not first_line.startswith(HEADING):
        raise _invalid(f"must start with the heading '{HEADING}'")
    if _REFUSAL.match(first_line[len(HEADING) :]) or _looks_like_refusal(rest):
        raise _invalid("looks like a refusal or an error message, not a summary")
    if not rest.strip():
        raise _invalid("has a heading but no summary under it")
    text = _cut_closing_chatter(text)
    if len(text) > STATE_BODY_MAX:
        raise _invalid(f"is {len(text)} characters; the limit is {STATE_BODY_MAX}")
    return text


def _looks_like_refusal(rest: str) -> bool:
    """The first line under the heading reads like a refusal or an error message (a list item
    such as "- Error: the build broke" is content, not a failed summarizer)."""
    for line in rest.split("\n"):
        if line.strip():
            return not _LIST_ITEM.match(line) and bool(_REFUSAL.match(line.strip()))
    return False


def _cut_closing_chatter(text: str) -> str:
    """Drop trailing paragraphs after the final list when they speak to the reader."""
    lines = text.split("\n")
    last_item = max((i for i, line in enumerate(lines) if _LIST_ITEM.match(line)), default=None)
    if last_item is None:
        return text
    # The list ends at the first blank line after its last item (continuation lines stay).
    end = last_item + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    tail = "\n".join(lines[end:])
    if tail.strip() and not tail.lstrip().startswith("#") and _ADDRESSED_TO_READER.search(tail):
        return "\n".join(lines[:end]).rstrip()
    return text


def _invalid(problem: str) -> ValidationError:
    return ValidationError(f"The running summary {problem}.", fields={"body": problem})
