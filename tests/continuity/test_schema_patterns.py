"""The patterns the input schemas state for rules checked in Python (core.validation) accept
exactly what those checks accept, read as JSON Schema reads them (ECMA-262: `$` is the end of
the text; Python's re also lets it match before a final newline)."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.validation import (
    BRANCH_PATTERN,
    NO_NUL_PATTERN,
    NOT_BLANK_PATTERN,
    SPACE_CLASS,
    branch_name,
    not_blank,
    storable,
)


def ecma(pattern: str) -> re.Pattern[str]:
    # No "$" in these patterns is a literal, and none uses "." as a wildcard (its line
    # terminators differ between the two dialects).
    return re.compile(pattern.replace("$", r"\Z"))


def accepts(check: object, value: str) -> bool:
    try:
        for one in check if isinstance(check, tuple) else (check,):
            one(value)
    except ValueError:
        return False
    return True


RULES = {
    "no NUL": (NO_NUL_PATTERN, storable),
    "not blank": (NOT_BLANK_PATTERN, (storable, not_blank)),
    "branch": (BRANCH_PATTERN, (storable, branch_name)),
}
TRICKY = "ab./-@{}:~^*?[\\ \t\n\r\x00\x1c\x7f\x85\xa0\u2028\ufefflock"
EDGES = [
    "",
    " ",
    "\ufeff",
    "\x1c",
    "\x85",
    "a\n",
    "main",
    "main.lock",
    "feature/x",
    "a/.b",
    "a..b",
    "@",
    "a@{b",
    "-x",
    "x/",
    "a\u2028..",
    "a\u2028b",
    "a\x00",
]


def test_the_space_class_is_what_str_strip_strips():
    space = re.compile(f"[{SPACE_CLASS}]")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert bool(space.match(char)) is char.isspace(), hex(code)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("value", EDGES)
def test_a_stated_pattern_agrees_with_its_check_at_the_edges(rule: str, value: str):
    pattern, check = RULES[rule]
    assert bool(ecma(pattern).search(value)) is accepts(check, value), (rule, value)


@pytest.mark.parametrize("rule", RULES)
@settings(max_examples=300, deadline=None)
@given(value=st.text(alphabet=TRICKY, max_size=12) | st.text(max_size=12))
def test_a_stated_pattern_agrees_with_its_check(rule: str, value: str):
    pattern, check = RULES[rule]
    assert bool(ecma(pattern).search(value)) is accepts(check, value), (rule, value)
