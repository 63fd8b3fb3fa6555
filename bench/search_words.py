"""The words of bench/search.py's memories: a vocabulary of VOCABULARY made-up words, drawn
with a steep power law (the first word is in nearly every memory, the last in few), plus marked
words whose frequency is known: every memory says either "ipsum" or "dolor" (common, never
together), and "kestrel" is in one memory in MARKED_RARE.
"""

from __future__ import annotations

import random

VOCABULARY = 20_000
SKEW = 4  # a word's rank is VOCABULARY * random() ** SKEW
MARKED_RARE = 333_333
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dra", "fen")


def vocabulary() -> list[str]:
    rng = random.Random(11)
    words: set[str] = set()
    ordered: list[str] = []
    while len(ordered) < VOCABULARY:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.add(word)
            ordered.append(word)
    return ordered


SENTENCES = 50_000
SENTENCE_CHARACTERS = 64  # about: 8 words of 7 letters and their spaces


def sentences(rng: random.Random) -> list[str]:
    """The pool PostgreSQL's load draws memories from: SENTENCES of 5 to 11 words each."""
    words = vocabulary()
    return [
        " ".join(words[int(VOCABULARY * rng.random() ** SKEW)] for _ in range(rng.randint(5, 11)))
        for _ in range(SENTENCES)
    ]
