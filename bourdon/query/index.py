"""The federation index: every live manifest of a library, in memory, ready to query.

Built from ``agents/*.l5.yaml`` at start-up and kept fresh without a restart. The index
answers from its current ``Snapshot`` (``bourdon.query.snapshot``), one ``AgentPart`` per
agent, and replaces it whole when the files change:

- ``refresh()`` looks at the files (one small file read and a few ``stat`` calls when nothing
  changed: the branch ref, ``agents/`` and the export's verdicts), re-reads only the manifests
  whose ``(inode, size, mtime)`` moved (their parsed form usually from the shared cache under
  ``.bourdon/cache``), builds a new part for each of those agents only, makes the recognizers
  the old snapshot served lately, and only then swaps the new snapshot in. Queries running
  meanwhile keep answering from the old one; one refresh runs at a time.
- ``refresh_soon()`` does the same in a background thread and returns at once: the file
  watcher and turn-start calls use it, so neither waits for a rebuild.
- ``is_stale()`` says whether the files moved since the current snapshot was read: a call that
  must see a change made before it arrived runs ``refresh()`` off the event loop first.
- Validity (``bourdon.query.validity``) is judged for one UTC day, ``today()`` from the clock the
  index was given. Each snapshot records the day it was made for; the first call of a new day
  starts a background refresh that judges the same parts for it (no file is read) and makes
  the recognizers callers used. Until it is swapped in, recognition drops the rows that ended
  (``lifecycle()`` is always today's), so no turn waits and none sees an expired row.

Manifests are read as ``reading.read_manifest`` reads them: whatever the Bourdon L5 schema accepts
is served. A row that does not validate is left out and reported in ``row_problems`` (the rest
of its manifest serves); a manifest whose top level is broken is skipped whole and reported in
``problems``. Either way the rest of the library keeps serving. Queries never read YAML.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, NamedTuple

from bourdon.errors import BourdonError
from bourdon.formats.reading import ReadProblem
from bourdon.model import SUFFIX, Visibility
from bourdon.query.agentpart import AgentPart
from bourdon.query.recognition import Recognizer
from bourdon.query.rows import AgentView, EntityRow, NoteRow, SessionRow, WorkstreamRow
from bourdon.query.snapshot import Match, Snapshot
from bourdon.query.validity import Clock, Lifecycle, utc_today
from bourdon.store.git.refs import read_ref
from bourdon.store.manifestcache import ManifestCache

__all__ = ["Index", "Match"]

TEAM = int(Visibility.TEAM)
SETTLE: Final = 0.05  # seconds of quiet in agents/ before a watcher-started rebuild
log = logging.getLogger("bourdon.index")


class _Loaded(NamedTuple):
    """What one version of one manifest file gave: a part, or why it is skipped."""

    part: AgentPart | None
    problem: str | None
    row_problems: tuple[ReadProblem, ...]


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

    def __init__(
        self, root: Path, cache: ManifestCache | None = None, *, clock: Clock = utc_today
    ) -> None:
        self.root = root
        self.clock = clock
        self.agents_dir = root / "agents"
        self.cache = cache or ManifestCache(root / ".bourdon" / "cache")
        self.state = Snapshot.empty()
        self._loaded: dict[str, tuple[tuple[int, int, int], _Loaded]] = {}  # file -> version
        self._marker: tuple[object, ...] = ()
        self._dirty = True
        self._checked = 0.0
        self._building = threading.Lock()  # one refresh at a time
        self._soon = threading.Lock()  # guards the background refresher's two flags
        self._running = False
        self._again = False
        self._settling: threading.Timer | None = None
        self._head_file = str(root / ".git" / "HEAD")
        self._agents_str = str(self.agents_dir)
        self._marks_str = str(root / ".bourdon" / "watermarks")  # drift verdicts of the export
        self._head_seen: object = None
        self._ref_file = str(self._branch_ref())

    # -- the current snapshot, as queries read it ------------------------------------------

    @property
    def agents(self) -> dict[str, AgentView]:
        return self.state.agents

    @property
    def problems(self) -> dict[str, str]:
        return self.state.problems

    @property
    def row_problems(self) -> dict[str, tuple[ReadProblem, ...]]:
        return self.state.row_problems

    @property
    def entity_rows(self) -> list[EntityRow]:
        return self.state.entity_rows

    @property
    def sessions(self) -> list[SessionRow]:
        return self.state.sessions

    @property
    def notes(self) -> list[NoteRow]:
        return self.state.notes

    @property
    def workstreams(self) -> list[WorkstreamRow]:
        return self.state.workstreams

    @property
    def drifting(self) -> list[dict[str, Any]]:
        return self.state.drifting

    @property
    def head(self) -> str | None:
        return self.state.head

    @property
    def generation(self) -> int:
        return self.state.generation

    def match(
        self,
        query: str,
        *,
        fuzzy: bool = True,
        visible: Callable[[EntityRow], bool] = lambda row: True,
    ) -> list[Match]:
        """``Snapshot.match`` on the current snapshot."""
        return self.state.match(query, fuzzy=fuzzy, visible=visible)

    def recognizer_for(self, level: int, agents: frozenset[str] | None) -> Recognizer:
        """``Snapshot.recognizer_for`` on the current snapshot, judged for today."""
        return self.today_state().recognizer_for(level, agents)

    def lifecycle(self) -> Lifecycle:
        """Today and the ``supersedes`` links of the current snapshot."""
        state, day = self.today_state(), self.today()
        return state.lifecycle if state.day == day else state.lifecycle.on(day)

    def today(self) -> str:
        """The day validity is judged for, ``YYYY-MM-DD``, from the index's clock."""
        return self.clock().isoformat()

    def today_state(self) -> Snapshot:
        """The current snapshot; on a new day, a background refresh judges it for today."""
        state = self.state
        if state.day != self.today():
            self.refresh_soon()
        return state

    def row_warnings(self, level: int, agents: frozenset[str] | None = None) -> list[str]:
        return self.state.row_warnings(level, agents)

    def warm(self, level: int = TEAM) -> None:
        """Make the current snapshot's lazy parts now: every agent's typo index and tables,
        and the recognizer at ``level`` (the server's warm-up thread runs this once its opening
        calls are answered)."""
        state = self.today_state()
        for part in state.parts.values():
            part.warm(level, state.day)
        self.recognizer_for(level, None)

    # -- freshness -----------------------------------------------------------------------

    def mark_dirty(self) -> None:
        """Called from a file watcher's thread: the files changed, rebuild in the background
        once they have been quiet for ``SETTLE`` s (an export writes several agents in a row,
        and one commit is several file events: one rebuild takes them all)."""
        self._dirty = True
        with self._soon:
            if self._settling is not None:
                self._settling.cancel()
            self._settling = threading.Timer(SETTLE, self._settled)
            self._settling.daemon = True
            self._settling.start()

    def _settled(self) -> None:
        with self._soon:
            self._settling = None
        self.refresh_soon()

    def refresh_if_due(self, max_age: float = 1.0) -> bool:
        """For the turn-start path, which never waits for a rebuild: start one in the
        background if the watcher saw a change or the last look is ``max_age`` s old, and
        answer from the current snapshot meanwhile. Touches no file on most calls."""
        if self._dirty or time.monotonic() - self._checked > max_age:
            self._checked = time.monotonic()
            self.refresh_soon()
            return True
        return False

    def is_stale(self) -> bool:
        """Did the files move since the current snapshot was read? (a few ``stat`` calls)"""
        return self._dirty or self._change_marker() != self._marker

    def refresh_soon(self) -> None:
        """Refresh in a background thread; return at once. A change seen while a refresh is
        running makes it run once more when it ends."""
        with self._soon:
            if self._running:
                self._again = True
                return
            self._running = True
        threading.Thread(target=self._refresh_loop, name="bourdon-index", daemon=True).start()

    def _refresh_loop(self) -> None:
        while True:
            try:
                self.refresh()
            except Exception:  # a rebuild that fails leaves the current snapshot served
                log.exception("could not refresh the index")
            with self._soon:
                if not self._again:
                    self._running = False
                    return
                self._again = False

    def refresh(self) -> bool:
        """Bring the index up to date with the files; return True if anything changed.

        Safe from any thread. The new snapshot is complete (parts, typo indexes, the
        recognizers callers used lately) before it replaces the current one."""
        with self._building:
            marker = self._change_marker()
            self._checked = time.monotonic()
            if not self._dirty and marker == self._marker:
                if self.state.day != self.today():  # a new day: the same files judged for it
                    new = self.state.for_day(self.today())
                    new.carry_recognizers(self.state)
                    self.state = new
                return False
            self._dirty = False
            with _no_gc_pauses():
                changed, fresh = self._rescan()
                old = self.state
                if changed or not self._marker:
                    new = Snapshot(
                        {
                            name[: -len(SUFFIX)]: loaded.part
                            for name, (_, loaded) in self._loaded.items()
                            if loaded.part is not None
                        },
                        problems={n: v.problem for n, (_, v) in self._loaded.items() if v.problem},
                        row_problems={
                            n: v.row_problems
                            for n, (_, v) in self._loaded.items()
                            if v.row_problems
                        },
                        head=self._read_head(),
                        generation=old.generation + (1 if changed else 0),
                        drifting=self._load_drift(),
                        day=self.today(),
                    )
                    new.lifecycle  # noqa: B018 - made here, off the turn-start path
                    if old.parts:  # not the first look: nothing may wait once it is served
                        for part in fresh:
                            part.warm(TEAM, new.day)
                        new.carry_recognizers(old)
                else:
                    new = old.with_head(self._read_head(), self._load_drift())
            self.state = new
            self._marker = marker
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

    def _rescan(self) -> tuple[bool, list[AgentPart]]:
        """Read the manifests whose file moved; whether anything changed, and the new parts."""
        seen: dict[str, tuple[tuple[int, int, int], _Loaded]] = {}
        fresh: list[AgentPart] = []
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
            known = self._loaded.get(entry.name)
            if known is not None and known[0] == key:
                seen[entry.name] = known
                continue
            changed = True
            loaded = self._load(entry.name, Path(entry.path))
            seen[entry.name] = (key, loaded)
            if loaded.part is not None:
                fresh.append(loaded.part)
        if set(self._loaded) - set(seen):
            changed = True
        self._loaded = seen
        return changed, fresh

    def _load(self, name: str, path: Path) -> _Loaded:
        agent_id = name[: -len(SUFFIX)]
        try:
            raw = path.read_bytes()
            data, skipped = self.cache.read(raw, what=f"agents/{name}")
            named = str(data["agent"]["id"])
            if named != agent_id:
                raise BourdonError(f"agents/{name} holds agent {named!r}; rename the file")
            return _Loaded(AgentPart(AgentView.build(agent_id, data, skipped)), None, skipped)
        except (OSError, BourdonError) as exc:
            # An OSError's text holds the file's absolute path: the name above says which file,
            # and the path of the server's machine is not for every caller to read.
            message = exc.message if isinstance(exc, BourdonError) else exc.strerror or str(exc)
            return _Loaded(None, f"agents/{name} skipped: {message}", ())

