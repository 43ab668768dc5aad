"""A person's search text as an FTS5 query that cannot fail to parse (pure).

What is understood: words (any of them may match: rows with more of them rank higher),
``"double-quoted phrases"`` (the words next to each other), and a trailing ``*`` for a prefix
(``impo*``). Everything else is punctuation: every word is quoted here before it reaches FTS5,
so ``AND(``, a stray quote or ``NEAR`` are searched as words, never read as syntax.
"""

from __future__ import annotations

import re
from typing import Final

MAX_TERMS: Final = 32
_PART: Final = re.compile(r'"([^"]*)"|(\w+)(\*?)')
_WORD: Final = re.compile(r"\w+")


def terms(text: str) -> list[str]:
    """The quoted FTS5 terms of ``text``: ``"word"``, ``"word"*`` or ``"two words"``."""
    out: list[str] = []
    for match in _PART.finditer(text):
        phrase, word, star = match.groups()
        if phrase is not None:
            words = _WORD.findall(phrase)
            if words:
                out.append('"' + " ".join(words) + '"')
        elif word:
            out.append(f'"{word}"' + ("*" if star else ""))
    unique = list(dict.fromkeys(out))
    return unique[:MAX_TERMS]


def fts_query(text: str) -> str | None:
    """The MATCH expression for ``text``; None when it holds no word at all."""
    found = terms(text)
    return " OR ".join(found) if found else None
