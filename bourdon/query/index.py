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
- ``near``: a ``fuzzy.NearIndex`` of every name and alias, so near misses (up to two edits)
  are found from a small candidate set, never by scanning every name.

The rows themselves are ``bourdon.query.rows``.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, NamedTuple

from bourdon.errors import BourdonError
from bourdon.formats.reading import ReadProblem
from bourdon.model import SUFFIX, fold
from bourdon.query.fuzzy import NearIndex, loose
from bourdon.query.recognition import Recognizer
from bourdon.query.rows import AgentView, EntityRow, NoteRow, SessionRow, WorkstreamRow
from bourdon.store.git.refs import read_ref
from bourdon.store.manifestcache import ManifestCache

# Names shorter than this only match exactly: "mark" is not a typo of "park".
MIN_FUZZY_LENGTH: Final = 6
MAX_EDITS: Final = 2


class Match(NamedTuple):
    """An entity row that matched a query, and how."""

    row: EntityRow
    kind: str  # exact | alias | fuzzy
    score: float


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
            # An OSError's text holds the file's absolute path: the name above says which file,
            # and the path of the server's machine is not for every caller to read.
            message = exc.message if isinstance(exc, BourdonError) else exc.strerror or str(exc)
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
        self.near = NearIndex((), budget=MAX_EDITS, min_length=MIN_FUZZY_LENGTH)
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
        sessions.sort(key=lambda s: s.key, reverse=True)
        notes.sort(key=lambda n: n.key, reverse=True)
        self.by_name, self.by_alias, self.by_loose = dict(by_name), dict(by_alias), dict(by_loose)
        self.near = NearIndex({*by_name, *by_alias}, budget=MAX_EDITS, min_length=MIN_FUZZY_LENGTH)
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
        characters or more within two edits (insert, delete, replace, swap two neighbours:
        ``bourdon.query.fuzzy``), or the same letters and digits with other punctuation
        ("ledger line" for "ledger-line"). Shorter names only match exactly, so short words
        never pull in unrelated names.
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
        for name, distance in self.near.near(folded):
            score = round(90.0 * (1 - distance / max(len(name), len(folded))), 1)
            for row in (*self.by_name.get(name, ()), *self.by_alias.get(name, ())):
                if id(row) not in seen and visible(row):
                    seen.add(id(row))
                    found.append(Match(row, "fuzzy", score))
        return found
