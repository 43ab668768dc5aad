"""The one fuzzy matcher: how far a misspelt word is from a known one, and where to look.

Distance is OSA (optimal string alignment): an insertion, a deletion, a replacement or a swap
of two neighbours is one edit, so "borudon" is one edit from "bourdon". Each caller chooses its
own budget and length floor: ``find_entity`` allows two edits on names of six characters or
more, recognition one on prompt words of five or more.

``NearIndex`` finds the known words within the budget without scanning them all (pigeonhole):
every word is cut into budget + 1 parts. An edit spoils at most one part, except a swap across
a cut, which spoils two; but then the part left of the cut is whole again once the swap is
undone. So some part appears in the query, as it is or with its last letter and the next one
swapped back, shifted by at most budget places. Looking those up gives a small candidate set,
which rapidfuzz then measures exactly.

>>> NearIndex(["bourdon", "ledger"], budget=1, min_length=4).near("borudon")
[('bourdon', 1)]

``loose`` is the other kind of near miss: the same letters and digits, other punctuation.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable

from rapidfuzz import process
from rapidfuzz.distance import OSA

_LOOSE = re.compile(r"[\W_]+", re.UNICODE)


def loose(text: str) -> str:
    """A name without case, spaces or punctuation: 'Ledger-Line' -> 'ledgerline'."""
    return _LOOSE.sub("", text.casefold())


@functools.lru_cache(maxsize=1024)
def _segments(length: int, parts: int) -> tuple[tuple[int, int], ...]:
    """Split a word of ``length`` into ``parts`` parts: (start, size) of each, longest last."""
    base, extra = divmod(length, parts)
    out, start = [], 0
    for i in range(parts):
        size = base + (1 if i >= parts - extra else 0)
        out.append((start, size))
        start += size
    return tuple(out)


class NearIndex:
    """Known words cut into parts, to find those within ``budget`` edits of a query."""

    def __init__(self, words: Iterable[str], *, budget: int, min_length: int) -> None:
        """Words shorter than ``min_length`` are left out: they only ever match exactly."""
        if min_length <= budget:
            raise ValueError("min_length must exceed budget: every part needs a letter")
        self.budget = budget
        self.min_length = min_length
        parts: dict[tuple[int, int, str], list[str]] = defaultdict(list)
        for word in set(words):
            if len(word) >= min_length:
                for i, (start, size) in enumerate(_segments(len(word), budget + 1)):
                    parts[(len(word), i, word[start : start + size])].append(word)
        self._parts = dict(parts)

    def near(self, query: str) -> list[tuple[str, int]]:
        """Known words within the budget of ``query`` (not itself), nearest first, then A-Z."""
        budget, length, lookup = self.budget, len(query), self._parts.get
        last = budget  # the last part has no cut on its right, so no swap across one
        candidates: set[str] = set()
        for size in range(max(length - budget, self.min_length), length + budget + 1):
            for i, (start, part) in enumerate(_segments(size, budget + 1)):
                lo, hi = max(0, start - budget), min(length - part, start + budget)
                for at in range(lo, hi + 1):
                    hit = lookup((size, i, query[at : at + part]))
                    if hit:
                        candidates.update(hit)
                    if i < last and at + part < length:  # its last letter swapped with the next
                        hit = lookup((size, i, query[at : at + part - 1] + query[at + part]))
                        if hit:
                            candidates.update(hit)
        candidates.discard(query)
        if not candidates:
            return []
        found = process.extract(
            query, list(candidates), scorer=OSA.distance, score_cutoff=budget, limit=None
        )
        return sorted(((word, int(d)) for word, d, _ in found), key=lambda item: (item[1], item[0]))
