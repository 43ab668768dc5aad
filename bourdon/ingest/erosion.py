"""The erosion guard (step 5 of the export): a view that looks like data loss is not committed.

A view is refused, unless the export is forced, when it would drop more than half of this
reader's rows (and more than ten), when the store lost rows in three exports running, or when
it is empty where the store used to yield rows (the reader's format may have drifted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from bourdon.model import ROW_SECTIONS, produced_by, row_key

EROSION_SHARE: Final = 0.5  # a view may not drop more than this share of the reader's rows...
EROSION_MIN_ROWS: Final = 10  # ...when that is more than this many rows
LOSING_STREAK: Final = 3  # exports in a row that lose rows before the guard steps in


def erosion(
    mine: set[tuple[str, ...]],
    fresh: set[tuple[str, ...]],
    history: list[int],
    *,
    before: int = 0,
) -> str | None:
    """Why committing ``fresh`` over this reader's rows ``mine`` looks like data loss, or None.

    ``history`` holds the row counts of the last committed exports, oldest first; ``before``
    how many rows the store yielded last time.
    """
    if before and not fresh:
        return (
            f"the store yielded no rows where it yielded {before} before; its format may "
            "have changed (drifting): check 'bourdon readers'"
        )
    dropped = len(mine - fresh)
    if mine and dropped > EROSION_MIN_ROWS and dropped > EROSION_SHARE * len(mine):
        return (
            f"it would drop {dropped} of the {len(mine)} rows this reader exported before "
            f"(more than {EROSION_SHARE:.0%})"
        )
    counts = [*history, len(fresh)]
    streak = 0
    for i in range(len(counts) - 1, 0, -1):
        if counts[i] >= counts[i - 1]:
            break
        streak += 1
    if streak >= LOSING_STREAK:
        trail = " -> ".join(str(n) for n in counts[-LOSING_STREAK - 1 :])
        return f"the store lost rows in {LOSING_STREAK} exports in a row ({trail})"
    return None


def row_keys(
    data: Mapping[str, Any] | None, source: Mapping[str, str] | None
) -> set[tuple[str, ...]]:
    """Row keys (section first) of ``data``; with ``source``, only the rows it produced."""
    found: set[tuple[str, ...]] = set()
    if not data:
        return found
    for section in ROW_SECTIONS:
        rows = data.get(section)
        if not isinstance(rows, list):
            continue
        for row in rows:
            if not isinstance(row, Mapping):
                continue
            if source is not None and not produced_by(row, source):
                continue  # the same rule the regeneration applies: committed rows are not its
            found.add((section, *row_key(section, row)))
    return found
