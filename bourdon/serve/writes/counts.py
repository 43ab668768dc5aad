"""Row counts of a write as the caller may see them: added, updated, removed, and totals.

"1 updated" must not tell a caller over the network that a private row exists, so for anyone
but the local operator the counts are taken again with the rows above its level left out.

A commit is counted as if the rows hidden from the caller were not there at all
(``commit_counts``): a change naming a hidden row (which it updates, and which stays hidden)
answers exactly as a change naming a new one would, so no answer says whether a name exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from bourdon.access.visibility import filter_manifest
from bourdon.merge.floor import keep_floor
from bourdon.merge.twoway import compare, merge
from bourdon.model import ENTITIES, NOTES, ROW_SECTIONS, SESSIONS, WORKSTREAMS, Visibility
from bourdon.store.library import Library
from bourdon.store.writes import WriteResult

# The reference names its per-section counts by these short names: entities_added, total_notes.
SHORT: Final = {
    ENTITIES: "entities",
    SESSIONS: "sessions",
    WORKSTREAMS: "workstreams",
    NOTES: "notes",
}


@dataclass(frozen=True)
class CountsOf:
    """Per-section row counts of one write: added, updated, removed, and rows after it."""

    added: dict[str, int]
    updated: dict[str, int]
    removed: dict[str, int]
    totals: dict[str, int]

    def reference_keys(self) -> dict[str, int]:
        """``entities_added`` ... ``notes_updated``, then ``total_entities`` ... ``total_notes``."""
        out: dict[str, int] = {}
        for section, short in SHORT.items():
            out[f"{short}_added"] = self.added.get(section, 0)
            out[f"{short}_updated"] = self.updated.get(section, 0)
        for section, short in SHORT.items():
            out[f"total_{short}"] = self.totals.get(section, 0)
        return out

    def summary(self) -> dict[str, int]:
        """Rows added, updated and removed over the four sections."""
        return {
            "added": sum(self.added.values()),
            "updated": sum(self.updated.values()),
            "removed": sum(self.removed.values()),
        }


def hidden(level: int | None) -> bool:
    """Whether the caller may not see every row (anyone but the local operator)."""
    return level is not None and level < Visibility.PRIVATE


def visible_totals(data: Mapping[str, Any], level: int | None) -> dict[str, int]:
    shown = (
        filter_manifest(data, Visibility(level)) if level is not None and hidden(level) else data
    )
    return {s: len(shown.get(s) or []) for s in ROW_SECTIONS}


def visible_counts(library: Library, result: WriteResult, level: int | None) -> CountsOf:
    """Rows added, updated and removed by a write, and rows after it, as the caller may see them.

    The merge's own counts are exact for the local operator and for a staged write (a staging
    file holds only the member's own rows). For anyone else the write is compared again with
    the rows above its level left out: "1 updated" must not tell it a private row exists.
    """
    if not hidden(level) or result.staged:
        stats = result.stats
        totals = {s: result.totals.get(s, 0) for s in ROW_SECTIONS}
        return CountsOf(dict(stats.added), dict(stats.updated), dict(stats.removed), totals)
    after = library.read(result.agent_id, result.version).data
    if result.no_op:
        return CountsOf({}, {}, {}, visible_totals(after, level))
    before = (
        library.read(result.agent_id, result.previous_version).data
        if result.previous_version and not result.created
        else None
    )
    return counted(before, after, level)


def commit_counts(
    library: Library,
    result: WriteResult,
    level: int | None,
    change: Mapping[str, Any],
    mode: str,
    source: dict[str, str],
) -> CountsOf:
    """A commit's counts as the caller may see them, computed only from what it may see.

    The change is merged again into the manifest as the caller sees it (rows above its level
    left out), so the answer is the same whether or not a hidden row shares a name with a row
    of the change: the caller learns nothing of rows it cannot see, not even that they exist.
    """
    if not hidden(level) or result.staged or result.no_op:
        return visible_counts(library, result, level)
    assert level is not None
    before = (
        filter_manifest(
            library.read(result.agent_id, result.previous_version).data, Visibility(level)
        )
        if result.previous_version and not result.created
        else None
    )
    change = {**change, "agent": {**(change.get("agent") or {}), "id": result.agent_id}}
    after, _ = merge(before, change, mode=mode, source=source)
    after = keep_floor(after, before)
    return counted(before, after, level)


def counted(
    before: Mapping[str, Any] | None, after: Mapping[str, Any], level: int | None
) -> CountsOf:
    """Rows added, changed and removed from ``before`` to ``after`` at ``level``, and after."""
    changes = compare(before, after, level)
    return CountsOf(
        {s: len(r) for s, r in changes.added.items()},
        {s: len(r) for s, r in changes.changed.items()},
        {s: len(r) for s, r in changes.removed.items()},
        visible_totals(after, level),
    )
