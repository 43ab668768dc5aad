"""Common English words: the words that name an entity only when written as a proper noun.

A word is common when wordfreq (3.1.1) puts it at a Zipf frequency of 3.0 or more, once per
million words or more: "kettle", "anvil", "pass", "dana" are; "docker", "kafka", "priya" are
not. bourdon ships the list, derived by ``scripts/common_words.py`` (its first line says
how), so the runtime never needs wordfreq; a test re-derives it and compares. It is read once,
on first use, into a frozenset.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Final

WORDS_FILE: Final = Path(__file__).with_name("common_words.txt")


@functools.cache
def common_words() -> frozenset[str]:
    """Every common English word, lower case (the shipped list, read once)."""
    # One header line, then one word a line: split in C, no per-line Python (~5 ms).
    return frozenset(WORDS_FILE.read_text(encoding="utf-8").rstrip("\n").split("\n")[1:])


def is_common(word: str) -> bool:
    """Is ``word`` (one token: letters and digits) a common English word, in any case?"""
    return word.lower() in common_words()
