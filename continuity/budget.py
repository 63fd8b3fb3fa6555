"""Byte-budgeted previews for continuity_context.

The recovery index stays under a fixed JSON size whatever the project holds (docs/architecture.md).
The response is first measured with every preview empty; what remains of the budget is then
shared among the previews by water-filling: short texts keep their full length and the long ones
split the rest in proportion to their weight. So a project of short notes gets whole previews,
and an adversarial one still cannot push the response past the budget.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

ELLIPSIS = "…"
_WHITESPACE = re.compile(r"\s+")


def one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def json_len(text: str) -> int:
    """Bytes the string adds inside compact UTF-8 JSON, without its quotes."""
    return len(json.dumps(text, ensure_ascii=False).encode()) - 2


def clip(text: str, max_bytes: int) -> str:
    """The longest prefix that fits in max_bytes of JSON, marked with an ellipsis when cut."""
    if json_len(text) <= max_bytes:
        return text
    room = max_bytes - json_len(ELLIPSIS)
    if room <= 0:
        return ""
    # A prefix's JSON length grows with its length (each character adds its own escape), so
    # the longest fitting prefix is found by bisection: a few encodings, not one per character.
    fits, too_long = 0, len(text)
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if json_len(text[:middle]) <= room:
            fits = middle
        else:
            too_long = middle
    return text[:fits] + ELLIPSIS


def clip_chars(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + ELLIPSIS


@dataclass
class Preview:
    """A text slot in a budgeted response: its full text and its share weight."""

    text: str
    weight: float = 1.0
    value: str = ""

    @functools.cached_property
    def wanted(self) -> int:
        return json_len(self.text)


def fill(previews: list[Preview], budget: int) -> None:
    """Set each preview's value so that their JSON bytes together stay within budget."""
    level = _water_level(previews, max(budget, 0))
    for preview in previews:
        share = preview.weight * level
        allowance = preview.wanted if share >= preview.wanted else int(share)
        preview.value = clip(preview.text, allowance)


def _water_level(previews: list[Preview], budget: int) -> float:
    """The largest level L with sum(min(wanted, weight * L)) <= budget."""
    pending = sorted((p for p in previews if p.wanted > 0), key=lambda p: p.wanted / p.weight)
    remaining = float(budget)
    weights = sum(p.weight for p in pending)
    for preview in pending:
        level = remaining / weights
        if preview.weight * level < preview.wanted:
            return level
        remaining -= preview.wanted
        weights -= preview.weight
    return float("inf")


def materialize(value: Any) -> Any:
    """The response with every Preview replaced by its current value."""
    if isinstance(value, Preview):
        return value.value
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, list):
        return [materialize(item) for item in value]
    return value


def previews_in(value: Any) -> list[Preview]:
    if isinstance(value, Preview):
        return [value]
    if isinstance(value, dict):
        return [p for item in value.values() for p in previews_in(item)]
    if isinstance(value, list):
        return [p for item in value for p in previews_in(item)]
    return []


def fit(response: dict[str, Any], budget: int) -> dict[str, Any]:
    """Fill the response's previews so that its whole JSON stays within budget bytes."""
    previews = previews_in(response)
    skeleton = json_size(materialize(response))  # every preview still empty
    fill(previews, budget - skeleton)
    return materialize(response)


def json_size(value: Any) -> int:
    """Bytes of the compact UTF-8 JSON every transport sends."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
