"""Arguments generated from an advertised inputSchema (hypothesis-jsonschema), and the checks
that every answer of a tool is described by its advertised outputSchema."""

from __future__ import annotations

import math
from typing import Any

import jsonschema
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import _from_schema, from_schema


class _LegacyMany:
    """hypothesis-jsonschema 0.23.1 drives object generation through `many(...).more()` and
    `.reject()`, which Hypothesis 6.170 replaced by an iterator protocol; this is the old
    protocol over the same choice sequence, for that one call site of a package we do not own."""

    def __init__(
        self, data: Any, min_size: int, max_size: float, average_size: float, **_: Any
    ) -> None:
        self.data, self.min_size, self.max_size = data, min_size, max_size
        self.p_continue = _continue_probability(average_size - min_size, max_size - min_size)
        self.count = 0
        self.rejections = 0
        self.force_stop = False

    def more(self) -> bool:
        if self.min_size == self.max_size:
            go_on = self.count < self.min_size
        else:
            forced: bool | None = None
            if self.force_stop or self.count >= self.max_size:
                forced = False
            elif self.count < self.min_size:
                forced = True
            go_on = self.data.draw_boolean(self.p_continue, forced=forced)
        self.count += int(go_on)
        return bool(go_on)

    def reject(self, why: str | None = None) -> None:
        self.count -= 1
        self.rejections += 1
        if self.rejections > max(3, 2 * self.count):
            if self.count < self.min_size:
                self.data.mark_invalid(why)
            self.force_stop = True


def _continue_probability(desired_average: float, max_size: float) -> float:
    if desired_average >= max_size:
        return 1.0
    if max_size == math.inf:
        return 1 - 1.0 / (1 + desired_average)
    # The maintained helper handles the finite case; 0 < p < 1 is all the old protocol needs.
    p = float(conjecture_utils._calc_p_continue(desired_average, max_size))
    return min(max(p, 1e-6), 1 - 1e-6)


if not hasattr(conjecture_utils.many, "more"):

    class _PatchedUtils:
        many = _LegacyMany

    _from_schema.cu = _PatchedUtils  # type: ignore[assignment]


# hypothesis-jsonschema knows no "uuid" format; ids are canonical (hyphenated, lowercase).
FORMATS = {"uuid": st.uuids().map(str)}


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return from_schema(schema, custom_formats=FORMATS).map(_an_object)


def _an_object(value: Any) -> dict[str, Any]:
    assert isinstance(value, dict), value  # a root of type object generates objects only
    return value


def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A 2020-12 validator that also checks formats, as the TypeScript SDK's Ajv does."""
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator(schema).iter_errors(instance)
    ]
