"""The one fuzzy matcher: how far a misspelt word is from a known one, and where to look.

Distance is OSA (optimal string alignment): an insertion, a deletion, a replacement or a swap
of two neighbours is one edit, so "borudon" is one edit from "bourdon". Each caller chooses its
own budget and length floor: ``find_entity`` allows two edits on names of six characters or
more, recognition one on prompt words of six or more. ``NearIndex.merged`` joins the
indexes of several word sets (one per agent) without cutting any word again.

``NearIndex`` finds the known words within the budget without scanning them all (pigeonhole):
every word is cut into budget + 1 parts. An edit spoils at most one part, except a swap across
a cut, which spoils two; but then the part left of the cut is whole again once the swap is
undone. So some part appears in the query, shifted by at most budget places, as it is or with
its last letter replaced by the one after it (the index holds both forms). Looking those up
gives a small candidate set, which rapidfuzz then measures exactly.

>>> NearIndex(["bourdon", "ledger"], budget=1, min_length=4).near("borudon")
[('bourdon', 1)]

``loose`` is the other kind of near miss: the same letters and digits, other punctuation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

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
        # length -> one table per part: the part's text -> the words of that length holding it
        parts: dict[int, tuple[dict[str, list[str]], ...]] = {}
        for word in set(words):
            length = len(word)
            if length >= min_length:
                tables = parts.get(length)
                if tables is None:
                    tables = parts[length] = tuple({} for _ in range(budget + 1))
                cuts = _segments(length, budget + 1)
                for i, (table, (start, size)) in enumerate(zip(tables, cuts, strict=True)):
                    end = start + size
                    table.setdefault(word[start:end], []).append(word)
                    if i < budget and word[end - 1] != word[end]:
                        # As a swap across the cut leaves it in a query: its last letter
                        # replaced by the next one (the last part has no cut on its right).
                        table.setdefault(word[start : end - 1] + word[end], []).append(word)
        self._parts = parts

    @classmethod
    def merged(cls, indexes: Sequence[NearIndex]) -> NearIndex:
        """One index of the words of several (all of one budget and length floor), by merging
        their part tables: no word is cut again, and only parts two indexes share are joined."""
        if not indexes:
            raise ValueError("nothing to merge")
        budget, min_length = indexes[0].budget, indexes[0].min_length
        if any(i.budget != budget or i.min_length != min_length for i in indexes):
            raise ValueError("indexes of different budgets or floors do not merge")
        out = cls((), budget=budget, min_length=min_length)
        parts: dict[int, tuple[dict[str, list[str]], ...]] = {}
        for index in indexes:
            for length, tables in index._parts.items():
                mine = parts.get(length)
                if mine is None:
                    parts[length] = tuple(dict(table) for table in tables)
                    continue
                for into, table in zip(mine, tables, strict=True):
                    shared = into.keys() & table.keys()
                    joined = {part: into[part] + table[part] for part in shared}
                    into.update(table)
                    into.update(joined)
        out._parts = parts
        return out

    def near(self, query: str) -> list[tuple[str, int]]:
        """Known words within the budget of ``query`` (not itself), nearest first, then A-Z."""
        budget, length = self.budget, len(query)
        candidates: set[str] = set()
        for size in range(max(length - budget, self.min_length), length + budget + 1):
            tables = self._parts.get(size)
            if tables is None:
                continue
            for table, (start, part) in zip(tables, _segments(size, budget + 1), strict=True):
                lookup = table.get
                for at in range(max(0, start - budget), min(length - part, start + budget) + 1):
                    hit = lookup(query[at : at + part])
                    if hit:
                        candidates.update(hit)
        candidates.discard(query)
        if not candidates:
            return []
        found = process.extract(
            query, list(candidates), scorer=OSA.distance, score_cutoff=budget, limit=None
        )
        return sorted(((word, int(d)) for word, d, _ in found), key=lambda item: (item[1], item[0]))
