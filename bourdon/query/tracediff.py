"""One agent's walk through the versions of its manifest, following one entity's row.

``Walk.step`` is given each version's row as the caller may see it (``None`` where it is absent
or hidden) and records an ``Event`` when the row appears, changes, is renamed, gains aliases,
changes visibility, is removed or comes back. Only rows the caller sees add names to follow,
so a hidden version cannot steer what a later version matches.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from bourdon.model import Visibility
from bourdon.store.history import Version

# Stamped on each row by the write that made it: who wrote it is the event's ``by``, not a change.
UNCOMPARED: Final = frozenset({"source"})
COMMIT_OPS: Final = frozenset({"merge", "replace"})  # the reference calls both "commit"


@dataclass(frozen=True)
class Event:
    """One visible change of the entity's row in one agent's memory."""

    timestamp: str
    kind: str
    agent_id: str
    description: str
    commit: str
    name: str
    op: str
    by: str | None
    session: str | None
    transcript: str | None
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    aliases_added: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "timestamp": self.timestamp,
            "kind": self.kind,
            "agent_id": self.agent_id,
            "description": self.description,
            "ref": self.commit,
            "commit": self.commit,
            "name": self.name,
            "op": self.op,
            "by": self.by,
            "session": self.session,
            "transcript": self.transcript,
            "changes": self.changes,
            "aliases_added": self.aliases_added,
        }


def aliases_of(row: Mapping[str, Any] | None) -> list[str]:
    """A row's aliases as strings (one alias may be written as a string)."""
    value = (row or {}).get("aliases")
    if isinstance(value, str):
        return [value]
    return [str(a) for a in value] if isinstance(value, list) else []


@dataclass
class Walk:
    """The entity's row through one agent's versions, oldest first."""

    agent_id: str
    query: str
    events: list[Event] = field(default_factory=list)
    current: dict[str, Any] | None = None  # the row in the latest version, if seen there
    last_row: dict[str, Any] | None = None  # the latest row seen at all
    last_visibility: Visibility | None = None
    _names: set[str] = field(default_factory=set)
    _visibility: Visibility | None = None

    def __post_init__(self) -> None:
        self._names = {self.query.casefold()}

    def names(self) -> frozenset[str]:
        """The names followed so far (case-folded)."""
        return frozenset(self._names)

    def may_hold(self, raw: bytes) -> bool:
        """Whether a manifest's bytes may hold the row: a name followed appears in them (or an
        escape, behind which a name could hide)."""
        if b"\\" in raw:
            return True
        if raw.isascii():
            lower = raw.lower()
            return any(name.encode("ascii", "replace") in lower for name in self._names)
        text = raw.decode("utf-8", "replace").casefold()
        return any(name in text for name in self._names)

    def follow(self, found: tuple[dict[str, Any], Visibility] | None) -> None:
        """Follow the names and aliases of a row the caller may see, too."""
        if found is not None:
            self._follow(found[0])

    def _follow(self, row: Mapping[str, Any]) -> None:
        self._names.add(str(row["name"]).casefold())
        self._names.update(a.casefold() for a in aliases_of(row))

    def candidates(self, rows: object) -> Iterator[dict[str, Any]]:
        """Rows that may be the entity, best first: named like the query, then named or
        aliased like a name followed. The caller takes the first it may see."""
        if not isinstance(rows, list):
            return
        named = [r for r in rows if isinstance(r, dict) and isinstance(r.get("name"), str)]
        wanted, names = self.query.casefold(), self._names
        yield from (r for r in named if r["name"].casefold() == wanted)
        yield from (r for r in named if r["name"].casefold() in names)
        yield from (r for r in named if any(a.casefold() in names for a in aliases_of(r)))

    def types(self) -> list[str]:
        row = self.last_row or {}
        found = [row.get("type"), *list(row.get("types") or [])]
        return sorted({str(t) for t in found if t})

    def tags(self) -> list[str]:
        value = (self.last_row or {}).get("tags")
        return sorted({str(t) for t in value}) if isinstance(value, list) else []

    def aliases(self) -> list[str]:
        return sorted(set(aliases_of(self.last_row)))

    def step(
        self, version: Version, row: dict[str, Any] | None, visibility: Visibility | None = None
    ) -> None:
        """Take the next version's row (``None``: absent, or hidden from the caller)."""
        before, before_vis = self.current, self._visibility
        self.current, self._visibility = row, visibility if row is not None else None
        if row is None:
            if before is not None:
                name = str(before["name"])
                self._add(version, "removed", name, f"{name} removed from {self.agent_id} memory")
            return
        self.last_row, self.last_visibility = row, visibility
        self._follow(row)
        name = str(row["name"])
        if before is None:
            changes = _changes({}, row, None, visibility)
            if self.events:
                how = " by rollback" if version.op == "rollback" else ""
                text = f"{name} restored in {self.agent_id} memory{how}"
                self._add(version, "restored", name, text, changes, aliases_of(row))
            else:
                text = f"{name} first recorded in {self.agent_id} memory"
                self._add(version, "entity_origin", name, text, changes, aliases_of(row))
            return
        changes = _changes(before, row, before_vis, visibility)
        if not changes:
            return
        added = [a for a in aliases_of(row) if a not in aliases_of(before)]
        old = str(before["name"])
        if "name" in changes:
            kind, text = "renamed", f"{old} renamed to {name} in {self.agent_id} memory"
        elif "visibility" in changes:
            vis = changes["visibility"]
            kind, text = "visibility_changed", f"{name} visibility {vis['from']} -> {vis['to']}"
        elif added and set(changes) == {"aliases"}:
            kind, text = "aliases_gained", f"{name} gained alias {', '.join(added)}"
        else:
            kind, text = "changed", f"{name}: {', '.join(sorted(changes))} changed"
        self._add(version, kind, name, text, changes, added)

    def _add(
        self,
        version: Version,
        kind: str,
        name: str,
        text: str,
        changes: dict[str, dict[str, Any]] | None = None,
        added: list[str] | None = None,
    ) -> None:
        self.events.append(
            Event(
                timestamp=version.time,
                kind=kind,
                agent_id=self.agent_id,
                description=text,
                commit=version.version_id,
                name=name,
                op="commit" if version.op in COMMIT_OPS else version.op,
                by=version.caller,
                session=version.session,
                transcript=version.transcript,
                changes=changes or {},
                aliases_added=added or [],
            )
        )


def _changes(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    before_vis: Visibility | None,
    after_vis: Visibility | None,
) -> dict[str, dict[str, Any]]:
    """``{field: {"from", "to"}}`` for each field that differs; ``visibility`` is the row's
    effective visibility (its policy decides it when the row names none)."""
    out = {
        key: {"from": before.get(key), "to": after.get(key)}
        for key in sorted(set(before) | set(after))
        if key not in UNCOMPARED and key != "visibility" and before.get(key) != after.get(key)
    }
    if before_vis != after_vis:
        out["visibility"] = {
            "from": str(before_vis) if before_vis is not None else None,
            "to": str(after_vis) if after_vis is not None else None,
        }
    return out
