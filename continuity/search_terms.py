"""A memory search's text, read once into terms that both databases' full-text engines search.

The syntax is web search's, as PostgreSQL's websearch_to_tsquery reads it: words must all
appear, "quoted words" appear together in that order, `or` between words offers a choice, and
`-word` or `-"some words"` excludes. Anything else is text, never syntax: quotes, `&|!:*()` and
the like only separate words, so no input is an error.

Reading the text here, not in the database, gives PostgreSQL and SQLite (FTS5) the same terms,
and lets every query keep a word to look up in the index: alternatives made only of exclusions
and stop words are dropped, since they would have to read the whole project to answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Words made of letters and digits (an underscore separates, as in both databases' parsers).
_WORD = re.compile(r"[^\W_]+")
_TOKEN = re.compile(r'(-?)(?:"([^"]*)"?|([^\s"]+))')

# PostgreSQL's English stop words (the Snowball list its `english` configuration uses): words
# too common to be indexed. FTS5 has no stop words, so both sides drop them here.
_SNOWBALL_ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between
    into through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now
"""
STOP_WORDS = frozenset(_SNOWBALL_ENGLISH.split())


@dataclass(frozen=True)
class Term:
    """Words that must appear (a phrase: together, in this order), or must not (excluded)."""

    # The words as the user wrote them (PostgreSQL's parser reads hosts, e-mail addresses and
    # hyphenated words whole), and as letters and digits without stop words (FTS5's terms).
    source: str
    words: tuple[str, ...]
    phrase: bool = False
    excluded: bool = False


@dataclass(frozen=True)
class SearchTerms:
    """Alternatives (OR) of terms that must all hold (AND); each alternative looks up at least
    one word. No alternatives: the search finds nothing, without reading anything."""

    alternatives: tuple[tuple[Term, ...], ...]

    @property
    def empty(self) -> bool:
        return not self.alternatives


def parse(text: str) -> SearchTerms:
    alternatives: list[tuple[Term, ...]] = []
    current: list[Term] = []
    for minus, quoted, bare in _TOKEN.findall(text):
        if quoted == "" and bare.lower() == "or" and not minus:
            _close(current, alternatives)
            current = []
            continue
        source = quoted if bare == "" else bare
        words = tuple(_words(source))
        if words:
            phrase = bare == "" and len(words) > 1
            current.append(Term(source, words, phrase=phrase, excluded=bool(minus)))
    _close(current, alternatives)
    return SearchTerms(tuple(alternatives))


def _words(text: str) -> list[str]:
    return [word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]


def _close(terms: list[Term], alternatives: list[tuple[Term, ...]]) -> None:
    # An alternative with nothing to look up would match nearly every memory: dropped.
    if any(not term.excluded for term in terms):
        alternatives.append(tuple(terms))
