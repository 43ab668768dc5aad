"""What one sync did: the agents received from the remote and sent to it, and what was skipped."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Received:
    """One agent the remote changed, as integrated here (or as it would be, in a dry run)."""

    agent_id: str
    added: int
    changed: int
    removed: int
    version: str | None = None  # the integration commit; None in a dry run or for a no-op
    # Rows both sides changed differently: ``Conflict.to_dict()`` (section, row, fields, winner).
    conflicts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Sent:
    """One agent's published manifest that differs from the remote's."""

    agent_id: str
    rows: int  # rows in the published manifest
    withheld: int  # rows of the live manifest above the remote's visibility, never sent
    kept_home: int = 0  # rows within that visibility kept home (the remote keeps prompts home)


@dataclass
class SyncReport:
    remote: str
    dry_run: bool
    visibility: str
    attempts: int = 0
    remote_commit: str | None = None  # the remote's published state as fetched
    pushed: str | None = None  # the published commit the remote now holds, if one was sent
    received: list[Received] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # remote files not taken

    @property
    def up_to_date(self) -> bool:
        return not self.received and not self.sent

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "up_to_date": self.up_to_date}
