"""The federation index: every live manifest of a library, in memory, ready to query.

Built from ``agents/*.l5.yaml`` at start-up and kept fresh without a restart: each query first
calls ``refresh()``, which costs one small file read and one ``stat`` when nothing changed (the
branch ref and the ``agents/`` folder), plus a flag that a file watcher may set. When something
did change, only the files whose ``(inode, size, mtime)`` moved are read again, and their parsed
form usually comes from the shared cache under ``.bourdon/cache``. Queries never read YAML.

A manifest that fails to parse or validate is skipped and reported in ``problems``; the rest of
the library keeps serving.

Lookups:

- ``by_name`` / ``by_alias``: folded name -> entity rows, for exact and alias matches;
- ``by_loose``: the name with punctuation and spaces removed ("ledger-line" = "Ledger Line");
- ``by_length``: distinct folded names by length, so near misses are searched with rapidfuzz
  only among names that could be within two edits, never by a full scan.
"""

from __future__ import annotations

import os
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from bourdon.digest import digest
from bourdon.errors import BourdonError
from bourdon.manifestcache import ManifestCache
from bourdon.model import (
    ENTITIES,
    NOTES,
    SESSIONS,
    SUFFIX,
    WORKSTREAMS,
    Manifest,
    fold,
    row_visibility,
)

# Names shorter than this only match exactly: "mark" is not a typo of "park".
MIN_FUZZY_LENGTH: Final = 6
MAX_EDITS: Final = 2
_LOOSE = re.compile(r"[\W_]+", re.UNICODE)


def loose(text: str) -> str:
    """A name without case, spaces or punctuation: 'Ledger-Line' -> 'ledgerline'."""
    return _LOOSE.sub("", text.casefold())


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str))
    return (value,) if isinstance(value, str) else ()


@dataclass(frozen=True, slots=True)
class EntityRow:
    agent: str
    name: str
    type: str | None
    aliases: tuple[str, ...]
    summary: str | None
    tags: tuple[str, ...]
    visibility: int
    last_touched: str | None


@dataclass(frozen=True, slots=True)
class SessionRow:
    agent: str
    date: str
    cwd: str | None
    session_id: str | None
    project_focus: tuple[str, ...]
    key_actions: tuple[str, ...]
    files_touched: tuple[str, ...]
    visibility: int
    position: int

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """Total order of sessions, newest first when sorted in reverse."""
        return (self.date, self.agent, self.cwd or "", self.session_id or "", self.position)


@dataclass(frozen=True, slots=True)
class WorkstreamRow:
    agent: str
    name: str
    status: str
    summary: str | None
    started: str | None
    last_touched: str | None
    related_entities: tuple[str, ...]
    tags: tuple[str, ...]
    visibility: int


@dataclass(frozen=True, slots=True)
class NoteRow:
    agent: str
    date: str
    text: str
    related_entities: tuple[str, ...]
    tags: tuple[str, ...]
    visibility: int
    position: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.date, self.agent, self.position)


@dataclass
class AgentView:
    """One agent's manifest, split into rows with their visibility decided once."""

    agent_id: str
    data: Mapping[str, Any]
    digest: str
    entities: list[EntityRow] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)
    workstreams: list[WorkstreamRow] = field(default_factory=list)
    notes: list[NoteRow] = field(default_factory=list)

    @property
    def agent(self) -> Mapping[str, Any]:
        agent = self.data.get("agent")
        return agent if isinstance(agent, Mapping) else {}

    @classmethod
    def build(cls, agent_id: str, data: Mapping[str, Any]) -> AgentView:
        policy = Manifest(data).policy
        view = cls(agent_id, data, digest(data))

        def vis(row: Mapping[str, Any]) -> int:
            return int(row_visibility(row, policy))

        for row in _rows(data, ENTITIES):
            view.entities.append(
                EntityRow(
                    agent_id,
                    str(row["name"]),
                    row.get("type"),
                    _strings(row.get("aliases")),
                    row.get("summary"),
                    _strings(row.get("tags")),
                    vis(row),
                    row.get("last_touched"),
                )
            )
        for i, row in enumerate(_rows(data, SESSIONS)):
            view.sessions.append(
                SessionRow(
                    agent_id,
                    str(row.get("date") or ""),
                    row.get("cwd"),
                    row.get("session_id"),
                    _strings(row.get("project_focus")),
                    _strings(row.get("key_actions")),
                    _strings(row.get("files_touched")),
                    vis(row),
                    i,
                )
            )
        for row in _rows(data, WORKSTREAMS):
            view.workstreams.append(
                WorkstreamRow(
                    agent_id,
                    str(row["name"]),
                    str(row.get("status") or "active"),
                    row.get("summary"),
                    row.get("started"),
                    row.get("last_touched"),
                    _strings(row.get("related_entities")),
                    _strings(row.get("tags")),
                    vis(row),
                )
            )
        for i, row in enumerate(_rows(data, NOTES)):
            view.notes.append(
                NoteRow(
                    agent_id,
                    str(row.get("date") or ""),
                    str(row.get("text") or ""),
                    _strings(row.get("related_entities")),
                    _strings(row.get("tags")),
                    vis(row),
                    i,
                )
            )
        return view


def _rows(data: Mapping[str, Any], section: str) -> list[Mapping[str, Any]]:
    rows = data.get(section)
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []


@dataclass(frozen=True, slots=True)
class Match:
    """An entity row that matched a query, and how."""

    row: EntityRow
    kind: str  # exact | alias | fuzzy
    score: float


class Index:
    """All live manifests of one library, kept fresh, with the lookups queries need."""

    def __init__(self, root: Path, cache: ManifestCache | None = None) -> None:
        self.root = root
        self.agents_dir = root / "agents"
        self.cache = cache or ManifestCache(root / ".bourdon" / "cache")
        self.agents: dict[str, AgentView] = {}
        self.problems: dict[str, str] = {}
        self.generation = 0
        self._files: dict[str, tuple[int, int, int]] = {}
        self._marker: tuple[object, ...] = ()
        self._dirty = True
        self._lock = threading.Lock()
        self._clear_lookups()

    # -- freshness -----------------------------------------------------------------------

    def mark_dirty(self) -> None:
        """Called from a file watcher's thread: look at the files again on the next query."""
        self._dirty = True

    def refresh(self) -> bool:
        """Bring the index up to date with the files; return True if anything changed."""
        marker = self._change_marker()
        if not self._dirty and marker == self._marker:
            return False
        with self._lock:
            self._dirty = False
            self._marker = marker
            changed = self._rescan()
            if changed:
                self._rebuild_lookups()
                self.generation += 1
            return changed

    def _change_marker(self) -> tuple[object, ...]:
        """What moves when any process commits or replaces a manifest: cheap to read."""
        marker: list[object] = []
        for path in (self.root / ".git" / "HEAD", self._branch_ref()):
            try:
                marker.append(path.read_bytes())
            except OSError:
                marker.append(None)
        try:
            st = self.agents_dir.stat()
            marker.append((st.st_mtime_ns, st.st_ino))
        except OSError:
            marker.append(None)
        return tuple(marker)

    def _branch_ref(self) -> Path:
        git_dir = self.root / ".git"
        try:
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return git_dir / "HEAD"
        return git_dir / head[5:].strip() if head.startswith("ref: ") else git_dir / "HEAD"

    def _rescan(self) -> bool:
        seen: dict[str, tuple[int, int, int]] = {}
        changed = False
        try:
            entries = list(os.scandir(self.agents_dir))
        except OSError:
            entries = []
        for entry in entries:
            if not entry.name.endswith(SUFFIX) or entry.name.startswith("."):
                continue
            try:
                st = entry.stat()
            except OSError:
                continue
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
            seen[entry.name] = key
            if self._files.get(entry.name) == key:
                continue
            changed = True
            self._load(entry.name, Path(entry.path))
        for gone in set(self._files) - set(seen):
            changed = True
            self.problems.pop(gone, None)
            self.agents.pop(gone[: -len(SUFFIX)], None)
        self._files = seen
        return changed

    def _load(self, name: str, path: Path) -> None:
        agent_id = name[: -len(SUFFIX)]
        try:
            raw = path.read_bytes()
            data = self.cache.load(raw, what=f"agents/{name}")
            named = str(data["agent"]["id"])
            if named != agent_id:
                raise BourdonError(f"agents/{name} holds agent {named!r}; rename the file")
            self.agents[agent_id] = AgentView.build(agent_id, data)
            self.problems.pop(name, None)
        except (OSError, BourdonError) as exc:
            self.agents.pop(agent_id, None)
            message = exc.message if isinstance(exc, BourdonError) else str(exc)
            self.problems[name] = f"agents/{name} skipped: {message}"

    # -- lookups -------------------------------------------------------------------------

    def _clear_lookups(self) -> None:
        self.by_name: dict[str, list[EntityRow]] = {}
        self.by_alias: dict[str, list[EntityRow]] = {}
        self.by_loose: dict[str, list[EntityRow]] = {}
        self.by_length: dict[int, list[str]] = {}
        self.sessions: list[SessionRow] = []
        self.notes: list[NoteRow] = []
        self.workstreams: list[WorkstreamRow] = []

    def _rebuild_lookups(self) -> None:
        by_name: dict[str, list[EntityRow]] = defaultdict(list)
        by_alias: dict[str, list[EntityRow]] = defaultdict(list)
        by_loose: dict[str, list[EntityRow]] = defaultdict(list)
        sessions: list[SessionRow] = []
        notes: list[NoteRow] = []
        workstreams: list[WorkstreamRow] = []
        for agent_id in sorted(self.agents):
            view = self.agents[agent_id]
            for row in view.entities:
                by_name[fold(row.name)].append(row)
                by_loose[loose(row.name)].append(row)
                for alias in row.aliases:
                    by_alias[fold(alias)].append(row)
                    by_loose[loose(alias)].append(row)
            sessions.extend(view.sessions)
            notes.extend(view.notes)
            workstreams.extend(view.workstreams)
        lengths: dict[int, set[str]] = defaultdict(set)
        for name in (*by_name, *by_alias):
            if len(name) >= MIN_FUZZY_LENGTH:
                lengths[len(name)].add(name)
        sessions.sort(key=lambda s: s.key, reverse=True)
        notes.sort(key=lambda n: n.key, reverse=True)
        self.by_name, self.by_alias, self.by_loose = dict(by_name), dict(by_alias), dict(by_loose)
        self.by_length = {n: sorted(names) for n, names in lengths.items()}
        self.sessions, self.notes, self.workstreams = sessions, notes, workstreams

    def match(self, query: str, *, fuzzy: bool = True) -> list[Match]:
        """Entity rows matching ``query``: exact names, aliases, then near misses.

        Near misses: names of 6 characters or more within two edits (insert, delete, replace),
        or the same letters and digits with other punctuation ("ledger line" for
        "ledger-line"). Shorter names only match exactly, so short words never pull in
        unrelated names.
        """
        folded = fold(query)
        found: list[Match] = [Match(r, "exact", 100.0) for r in self.by_name.get(folded, ())]
        found += [Match(r, "alias", 95.0) for r in self.by_alias.get(folded, ())]
        if not fuzzy:
            return found
        seen = {id(m.row) for m in found}
        for row in self.by_loose.get(loose(query), ()):
            if id(row) not in seen:
                seen.add(id(row))
                found.append(Match(row, "fuzzy", 90.0))
        for name, distance in self._near(folded):
            score = round(90.0 * (1 - distance / max(len(name), len(folded))), 1)
            for row in (*self.by_name.get(name, ()), *self.by_alias.get(name, ())):
                if id(row) not in seen:
                    seen.add(id(row))
                    found.append(Match(row, "fuzzy", score))
        return found

    def _near(self, folded: str) -> Iterable[tuple[str, int]]:
        length = len(folded)
        if length < MIN_FUZZY_LENGTH - MAX_EDITS:
            return []
        out = []
        for size in range(length - MAX_EDITS, length + MAX_EDITS + 1):
            bucket = self.by_length.get(size)
            if not bucket:
                continue
            for name, distance, _ in process.extract(
                folded, bucket, scorer=Levenshtein.distance, score_cutoff=MAX_EDITS, limit=8
            ):
                if 0 < distance <= MAX_EDITS:
                    out.append((name, int(distance)))
        return sorted(out, key=lambda item: item[1])
