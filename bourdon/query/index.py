"""The federation index: every live manifest of a library, in memory, ready to query.

Built from ``agents/*.l5.yaml`` at start-up and kept fresh without a restart: each query first
calls ``refresh()``, which costs one small file read and one ``stat`` when nothing changed (the
branch ref and the ``agents/`` folder), plus a flag that a file watcher may set. When something
did change, only the files whose ``(inode, size, mtime)`` moved are read again, and their parsed
form usually comes from the shared cache under ``.bourdon/cache``. Queries never read YAML.

Manifests are read as ``reading.read_manifest`` reads them: whatever the Bourdon L5 schema accepts
is served. A row that does not validate is left out and reported in ``row_problems`` (the rest
of its manifest serves); a manifest whose top level is broken is skipped whole and reported in
``problems``. Either way the rest of the library keeps serving.

Lookups:

- ``by_name`` / ``by_alias``: folded name -> entity rows, for exact and alias matches;
- ``by_loose``: the name with punctuation and spaces removed ("ledger-line" = "Ledger Line");
- ``by_part``: each name cut into three parts, so near misses (up to two edits) are found from
  a small candidate set checked by rapidfuzz, never by scanning every name.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NamedTuple

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from bourdon.digest import digest
from bourdon.errors import BourdonError
from bourdon.formats.reading import ReadProblem
from bourdon.model import (
    ENTITIES,
    NOTES,
    ROW_SECTIONS,
    SESSIONS,
    SUFFIX,
    WORKSTREAMS,
    Manifest,
    fold,
    row_visibility,
)
from bourdon.query.recognition import Recognizer
from bourdon.store.git.refs import read_ref
from bourdon.store.manifestcache import ManifestCache

# Names shorter than this only match exactly: "mark" is not a typo of "park".
MIN_FUZZY_LENGTH: Final = 6
MAX_EDITS: Final = 2
_LOOSE = re.compile(r"[\W_]+", re.UNICODE)


def loose(text: str) -> str:
    """A name without case, spaces or punctuation: 'Ledger-Line' -> 'ledgerline'."""
    return _LOOSE.sub("", text.casefold())


def _strings(value: object) -> tuple[str, ...]:
    # Manifests are validated, so list fields hold strings; a bare string is one item.
    if isinstance(value, list):
        return tuple(value)
    return (value,) if isinstance(value, str) else ()


class EntityRow(NamedTuple):
    agent: str
    name: str
    type: str | None
    aliases: tuple[str, ...]
    summary: str | None
    tags: tuple[str, ...]
    visibility: int
    last_touched: str | None


class SessionRow(NamedTuple):
    agent: str
    date: str
    cwd: str | None
    session_id: str | None
    project_focus: tuple[str, ...]
    key_actions: tuple[str, ...]
    files_touched: tuple[str, ...]
    visibility: int
    position: int  # how many earlier sessions of this agent share date, cwd and id

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """Total order of sessions, newest first when sorted in reverse."""
        return (self.date, self.agent, self.cwd or "", self.session_id or "", self.position)


class WorkstreamRow(NamedTuple):
    agent: str
    name: str
    status: str
    summary: str | None
    started: str | None
    last_touched: str | None
    related_entities: tuple[str, ...]
    tags: tuple[str, ...]
    visibility: int


class NoteRow(NamedTuple):
    agent: str
    date: str
    text: str
    related_entities: tuple[str, ...]
    tags: tuple[str, ...]
    visibility: int
    position: int

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.date, self.agent, self.text[:80], self.position)


@dataclass
class AgentView:
    """One agent's manifest, split into rows with their visibility decided once."""

    agent_id: str
    data: Mapping[str, Any]
    entities: list[EntityRow] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)
    workstreams: list[WorkstreamRow] = field(default_factory=list)
    notes: list[NoteRow] = field(default_factory=list)
    skipped: tuple[ReadProblem, ...] = ()  # rows kept in the file but not served
    _digest: str | None = None

    @property
    def agent(self) -> Mapping[str, Any]:
        agent = self.data.get("agent")
        return agent if isinstance(agent, Mapping) else {}

    @property
    def served_data(self) -> Mapping[str, Any]:
        """The manifest without the rows left out (``data`` holds them: digests count them)."""
        if not self.skipped:
            return self.data
        left_out = {(p.section, p.row) for p in self.skipped}
        out = dict(self.data)
        for section in ROW_SECTIONS:
            rows = out.get(section)
            if isinstance(rows, list):
                out[section] = [r for i, r in enumerate(rows) if (section, i) not in left_out]
        return out

    @property
    def digest(self) -> str:
        """The manifest's digest, computed when first asked (start-up does not need it)."""
        if self._digest is None:
            self._digest = digest(self.data)
        return self._digest

    @classmethod
    def build(
        cls, agent_id: str, data: Mapping[str, Any], skipped: tuple[ReadProblem, ...] = ()
    ) -> AgentView:
        policy = Manifest(data).policy
        view = cls(agent_id, data, skipped=skipped)
        left_out: dict[str, set[int]] = {}
        for problem in skipped:
            if problem.section is not None and problem.row is not None:
                left_out.setdefault(problem.section, set()).add(problem.row)

        def _rows(data: Mapping[str, Any], section: str) -> list[dict[str, Any]]:
            return _served(data, section, left_out.get(section))

        plain = not policy.get("private_tags") and not policy.get("team_tags")
        default = int(row_visibility({}, policy))
        levels = {"public": 0, "team": 1, "private": 2}

        def vis(row: Mapping[str, Any]) -> int:
            # The common case (no tag rules) without a call per row; same answer as
            # row_visibility, which decides everything else.
            if plain:
                return levels.get(row.get("visibility"), default)  # type: ignore[arg-type]
            return int(row_visibility(row, policy))

        get = dict.get
        view.entities = [
            EntityRow(
                agent_id,
                row["name"],
                get(row, "type"),
                _strings(get(row, "aliases")),
                get(row, "summary"),
                _strings(get(row, "tags")),
                vis(row),
                get(row, "last_touched"),
            )
            for row in _rows(data, ENTITIES)
        ]
        view.sessions = [
            SessionRow(
                agent_id,
                get(row, "date") or "",
                get(row, "cwd"),
                get(row, "session_id"),
                _strings(get(row, "project_focus")),
                _strings(get(row, "key_actions")),
                _strings(get(row, "files_touched")),
                vis(row),
                repeat,
            )
            for row, repeat in _numbered(
                _rows(data, SESSIONS), lambda r: (r.get("date"), r.get("cwd"), r.get("session_id"))
            )
        ]
        view.workstreams = [
            WorkstreamRow(
                agent_id,
                row["name"],
                get(row, "status") or "active",
                get(row, "summary"),
                get(row, "started"),
                get(row, "last_touched"),
                _strings(get(row, "related_entities")),
                _strings(get(row, "tags")),
                vis(row),
            )
            for row in _rows(data, WORKSTREAMS)
        ]
        view.notes = [
            NoteRow(
                agent_id,
                get(row, "date") or "",
                get(row, "text") or "",
                _strings(get(row, "related_entities")),
                _strings(get(row, "tags")),
                vis(row),
                repeat,
            )
            for row, repeat in _numbered(
                _rows(data, NOTES), lambda r: (r.get("date"), r.get("text"))
            )
        ]
        return view


def _numbered(
    rows: list[dict[str, Any]], identity: Callable[[dict[str, Any]], object]
) -> Iterator[tuple[dict[str, Any], int]]:
    """Each row with how many earlier rows had the same identity (0 for almost every row).

    Pagination keys end with this number, not the row's position: a position would count
    the rows before it, hidden ones included.
    """
    seen: dict[object, int] = {}
    for row in rows:
        ident = identity(row)
        count = seen.get(ident, 0)
        seen[ident] = count + 1
        yield row, count


def _served(
    data: Mapping[str, Any], section: str, left_out: set[int] | None
) -> list[dict[str, Any]]:
    rows = data.get(section)
    if not isinstance(rows, list):
        return []
    if not left_out:
        return [r for r in rows if isinstance(r, dict)]
    return [r for i, r in enumerate(rows) if i not in left_out and isinstance(r, dict)]


class Match(NamedTuple):
    """An entity row that matched a query, and how."""

    row: EntityRow
    kind: str  # exact | alias | fuzzy
    score: float


def _segments(length: int) -> list[tuple[int, int]]:
    """Split a name of ``length`` into MAX_EDITS + 1 parts: (start, size) of each."""
    parts = MAX_EDITS + 1
    base, extra = divmod(length, parts)
    out, start = [], 0
    for i in range(parts):
        size = base + (1 if i >= parts - extra else 0)
        out.append((start, size))
        start += size
    return out


@contextlib.contextmanager
def _no_gc_pauses() -> Iterator[None]:
    """Hold the cyclic garbage collector while building: it would rescan every row it just
    made, several times over, and that was more than half of the start-up time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Index:
    """All live manifests of one library, kept fresh, with the lookups queries need."""

    def __init__(self, root: Path, cache: ManifestCache | None = None) -> None:
        self.root = root
        self.agents_dir = root / "agents"
        self.cache = cache or ManifestCache(root / ".bourdon" / "cache")
        self.agents: dict[str, AgentView] = {}
        self.problems: dict[str, str] = {}  # file name -> why the whole manifest is skipped
        self.row_problems: dict[str, tuple[ReadProblem, ...]] = {}  # file name -> rows left out
        self.generation = 0
        self.head: str | None = None  # the commit the branch held when the index last looked
        self._files: dict[str, tuple[int, int, int]] = {}
        self._marker: tuple[object, ...] = ()
        self._dirty = True
        self._checked = 0.0
        self.drifting: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._head_file = str(root / ".git" / "HEAD")
        self._agents_str = str(self.agents_dir)
        self._marks_str = str(root / ".bourdon" / "watermarks")  # drift verdicts of the export
        self._head_seen: object = None
        self._ref_file = str(self._branch_ref())
        self._clear_lookups()

    # -- freshness -----------------------------------------------------------------------

    def mark_dirty(self) -> None:
        """Called from a file watcher's thread: look at the files again on the next query."""
        self._dirty = True

    def refresh_if_due(self, max_age: float = 1.0) -> bool:
        """Refresh only if the watcher saw a change or the last look is ``max_age`` s old.

        For the turn-start path: most calls touch no file at all, and a commit made by
        another process is still seen within ``max_age`` even without a watcher.
        """
        if self._dirty or time.monotonic() - self._checked > max_age:
            return self.refresh()
        return False

    def refresh(self) -> bool:
        """Bring the index up to date with the files; return True if anything changed."""
        marker = self._change_marker()
        self._checked = time.monotonic()
        if not self._dirty and marker == self._marker:
            return False
        with self._lock, _no_gc_pauses():
            self._dirty = False
            self._marker = marker
            self.head = self._read_head()
            changed = self._rescan()
            if changed:
                self._rebuild_lookups()
                self.generation += 1
            self.drifting = self._load_drift()
            return changed

    def _change_marker(self) -> tuple[object, ...]:
        """What moves when any process commits or replaces a manifest: three ``stat`` calls.

        Every commit replaces the branch's ref file (a new inode), every atomic write of a
        manifest adds and removes names in ``agents/``. ``os.stat`` rather than ``Path.stat``
        or reading the files: this runs before every query and must cost microseconds.
        """
        marker: list[object] = []
        for path in (self._head_file, self._ref_file, self._agents_str, self._marks_str):
            try:
                st = os.stat(path)  # noqa: PTH116 - see the docstring
                marker.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                marker.append(None)
        if marker[0] != self._head_seen:  # HEAD moved to another branch: follow it
            self._head_seen = marker[0]
            self._ref_file = str(self._branch_ref())
        return tuple(marker)

    def _load_drift(self) -> list[dict[str, Any]]:
        """Readers whose store used to yield rows and stopped (the export's verdicts).

        Read when the index refreshes, so recognition itself never touches a file. An
        unreadable verdict is left out: a healthy-looking answer is the safe degradation.
        """
        found = []
        folder = self.root / ".bourdon" / "watermarks"
        try:
            paths = sorted(folder.glob("*.json"))
        except OSError:
            return []
        for path in paths:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            drift = data.get("drifting") if isinstance(data, dict) else None
            if isinstance(drift, dict) and drift:
                found.append(
                    {
                        "agent": str(data.get("reader") or path.stem),
                        "checked_at": drift.get("checked_at"),
                        "reason": drift.get("reason"),
                    }
                )
        return found

    def _read_head(self) -> str | None:
        """The branch's commit: its ref file, else its line in ``packed-refs`` (after a gc)."""
        git_dir = self.root / ".git"
        return read_ref(git_dir, Path(self._ref_file).relative_to(git_dir).as_posix())

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
            self.row_problems.pop(gone, None)
            self.agents.pop(gone[: -len(SUFFIX)], None)
        self._files = seen
        return changed

    def _load(self, name: str, path: Path) -> None:
        agent_id = name[: -len(SUFFIX)]
        try:
            raw = path.read_bytes()
            data, skipped = self.cache.read(raw, what=f"agents/{name}")
            named = str(data["agent"]["id"])
            if named != agent_id:
                raise BourdonError(f"agents/{name} holds agent {named!r}; rename the file")
            self.agents[agent_id] = AgentView.build(agent_id, data, skipped)
            self.problems.pop(name, None)
            if skipped:
                self.row_problems[name] = skipped
            else:
                self.row_problems.pop(name, None)
        except (OSError, BourdonError) as exc:
            self.agents.pop(agent_id, None)
            self.row_problems.pop(name, None)
            message = exc.message if isinstance(exc, BourdonError) else str(exc)
            self.problems[name] = f"agents/{name} skipped: {message}"

    def row_warnings(self, level: int, agents: frozenset[str] | None = None) -> list[str]:
        """A warning for each row left out that a caller at ``level`` (in ``agents``) could
        see: a private row's problem is not told to a caller who may not see private rows."""
        return [
            problem.message(f"agents/{name}") + " (left out; the rest of the file is served)"
            for name in sorted(self.row_problems)
            if agents is None or name.removesuffix(SUFFIX) in agents
            for problem in self.row_problems[name]
            if problem.level <= level
        ]

    # -- lookups -------------------------------------------------------------------------

    def _clear_lookups(self) -> None:
        self.by_name: dict[str, list[EntityRow]] = {}
        self.by_alias: dict[str, list[EntityRow]] = {}
        self.by_loose: dict[str, list[EntityRow]] = {}
        self.by_part: dict[tuple[int, int, str], list[str]] = {}
        self.sessions: list[SessionRow] = []
        self.notes: list[NoteRow] = []
        self.workstreams: list[WorkstreamRow] = []
        self.entity_rows: list[EntityRow] = []
        self._recognizers: dict[tuple[int, frozenset[str] | None], Recognizer] = {}

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
        parts: dict[tuple[int, int, str], list[str]] = defaultdict(list)
        for name in {*by_name, *by_alias}:
            if len(name) >= MIN_FUZZY_LENGTH:
                for i, (start, size) in enumerate(_segments(len(name))):
                    parts[(len(name), i, name[start : start + size])].append(name)
        sessions.sort(key=lambda s: s.key, reverse=True)
        notes.sort(key=lambda n: n.key, reverse=True)
        self.by_name, self.by_alias, self.by_loose = dict(by_name), dict(by_alias), dict(by_loose)
        self.by_part = dict(parts)
        self.sessions, self.notes, self.workstreams = sessions, notes, workstreams
        rows = [row for agent_id in sorted(self.agents) for row in self.agents[agent_id].entities]
        self.entity_rows = rows
        self._recognizers = {}  # built when first asked for (or warmed by the server)

    def recognizer_for(self, level: int, agents: frozenset[str] | None) -> Recognizer:
        """Recognition over only the names a caller may see, so hidden names can neither be
        matched nor change what is matched (a longer hidden name, a typo corrected towards
        one). Built once per (level, namespaces) and index generation; team is built with
        the index."""
        key = (level, agents)
        found = self._recognizers.get(key)
        if found is None:
            rows = self.entity_rows  # one snapshot: a rebuild replaces the list, never edits it
            found = Recognizer(
                (i, text, is_alias, row.name)
                for i, row in enumerate(rows)
                if row.visibility <= level and (agents is None or row.agent in agents)
                for text, is_alias in ((row.name, False), *((a, True) for a in row.aliases))
            )
            self._recognizers[key] = found
        return found

    def match(
        self,
        query: str,
        *,
        fuzzy: bool = True,
        visible: Callable[[EntityRow], bool] = lambda row: True,
    ) -> list[Match]:
        """Entity rows matching ``query``: exact names, aliases, then near misses.

        Near misses are searched only when no name or alias matches exactly: names of 6
        characters or more within two edits (insert, delete, replace), or the same letters
        and digits with other punctuation ("ledger line" for "ledger-line"). Shorter names
        only match exactly, so short words never pull in unrelated names.
        """
        folded = fold(query)
        # Only rows the caller may see count: a hidden exact match must not change what a
        # caller is told (whether near misses are offered would give it away).
        found: list[Match] = [
            Match(r, "exact", 100.0) for r in self.by_name.get(folded, ()) if visible(r)
        ]
        found += [Match(r, "alias", 95.0) for r in self.by_alias.get(folded, ()) if visible(r)]
        if found or not fuzzy:
            return found
        seen: set[int] = set()
        for row in self.by_loose.get(loose(query), ()):
            if id(row) not in seen and visible(row):
                seen.add(id(row))
                found.append(Match(row, "fuzzy", 90.0))
        for name, distance in self._near(folded):
            score = round(90.0 * (1 - distance / max(len(name), len(folded))), 1)
            for row in (*self.by_name.get(name, ()), *self.by_alias.get(name, ())):
                if id(row) not in seen and visible(row):
                    seen.add(id(row))
                    found.append(Match(row, "fuzzy", score))
        return found

    def _near(self, folded: str) -> Iterable[tuple[str, int]]:
        """Known names within MAX_EDITS edits of ``folded``, nearest first.

        Pigeonhole filter: cut a name into MAX_EDITS + 1 parts; two edits can spoil at most
        two of them, so one part appears intact in the query, shifted by at most two places.
        Looking those parts up gives a small candidate set (never a scan of every name),
        which rapidfuzz then checks exactly.
        """
        length = len(folded)
        candidates: set[str] = set()
        for size in range(max(length - MAX_EDITS, MIN_FUZZY_LENGTH), length + MAX_EDITS + 1):
            for i, (start, part) in enumerate(_segments(size)):
                lo, hi = max(0, start - MAX_EDITS), min(length - part, start + MAX_EDITS)
                for at in range(lo, hi + 1):
                    hit = self.by_part.get((size, i, folded[at : at + part]))
                    if hit:
                        candidates.update(hit)
        candidates.discard(folded)
        if not candidates:
            return []
        found = process.extract(
            folded,
            list(candidates),
            scorer=Levenshtein.distance,
            score_cutoff=MAX_EDITS,
            limit=None,
        )
        return sorted(((name, int(d)) for name, d, _ in found), key=lambda item: item[1])
