"""What one export did: its outcome, the counts, and why (``ExportResult``).

The outcome names are part of the wire: ``bourdon export --json``, ``bourdon readers`` and the
watermarks all carry them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final

from bourdon.access.redact import redact_text
from bourdon.merge import twoway as merge
from bourdon.readers.base import ReadStats

COMMITTED: Final = "committed"  # a new commit holds the fresh rows
NO_OP: Final = "no_op"  # read the store; the library already held exactly these rows
UNCHANGED: Final = "unchanged"  # the store's fingerprint is the last one: nothing read
REFUSED: Final = "refused"  # the erosion guard stopped it; nothing committed
DRY_RUN: Final = "dry_run"  # computed what would change; wrote nothing
MISSING: Final = "missing"  # no store on this machine
GOOD_OUTCOMES: Final = frozenset({COMMITTED, NO_OP, UNCHANGED, DRY_RUN})
FORCED: Final = "forced past the erosion guard"  # how a forced commit's reason starts


@dataclass
class ExportResult:
    """What one export did, and why."""

    reader: str
    outcome: str
    reason: str | None = None
    store: str | None = None
    store_files: int = 0
    store_bytes: int = 0
    rows: int = 0  # rows the reader's view holds (after redaction), or the last known count
    previous_rows: int = 0  # this reader's rows from this machine in the library before
    added: int = 0
    updated: int = 0
    removed: int = 0
    changes: merge.RowChanges | None = None  # by name; dry runs only
    redacted: dict[str, int] = field(default_factory=dict)
    version: str | None = None
    digest: str | None = None
    drifting: dict[str, str] | None = None
    stats: ReadStats | None = None
    seconds: float = 0.0

    @property
    def agent_id(self) -> str:
        return self.reader

    @property
    def ok(self) -> bool:
        return self.outcome in GOOD_OUTCOMES

    @property
    def capped(self) -> dict[str, int] | None:
        """How many sessions the store holds, and how many the session cap kept, when it
        left some out; ``None`` when it left none out (or nothing was read)."""
        stats = self.stats
        if stats is None or stats.found_sessions <= stats.sessions:
            return None
        return {
            "sessions_found": stats.found_sessions,
            "sessions_kept": stats.sessions,
            "sessions_dropped": stats.found_sessions - stats.sessions,
        }

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "reader": self.reader,
            "agent_id": self.reader,
            "outcome": self.outcome,
            "reason": self.reason,
            "store": self.store,
            "store_files": self.store_files,
            "store_bytes": self.store_bytes,
            "rows": self.rows,
            "previous_rows": self.previous_rows,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "redacted": self.redacted,
            "version_id": self.version,
            "digest": self.digest,
            "drifting": self.drifting,
            "capped": self.capped,
            "seconds": round(self.seconds, 3),
        }
        if self.changes is not None:
            out["changes"] = self.changes.to_dict()
        if self.stats is not None:
            out["read"] = stats_dict(self.stats)
        return out


def cap_note(capped: object) -> str | None:
    """The sentence the text outputs say when the session cap left sessions out."""
    if not isinstance(capped, dict):
        return None
    try:
        found, kept = int(capped["sessions_found"]), int(capped["sessions_kept"])
    except (KeyError, TypeError, ValueError):
        return None
    dropped = found - kept
    if dropped <= 0:
        return None
    return (
        f"kept the {kept:,} newest session{'s' if kept != 1 else ''} of {found:,}; "
        f"{dropped:,} older one{'s' if dropped != 1 else ''} left out: "
        "the cap keeps manifests small"
    )


def stats_dict(stats: ReadStats) -> dict[str, Any]:
    """What a reader says of its read, with at most ten problems (redacted)."""
    data = asdict(stats)
    data["problems"] = [redact_text(p) for p in stats.problems[:10]]
    return data
