"""One consistent state of the index: the agents' parts as of one look at the files.

The index answers from its current ``Snapshot`` and replaces it whole when the files change, so
a query sees one state from start to end and a rebuild never edits what a query is reading.
A new snapshot reuses every ``AgentPart`` whose file did not change; what spans agents (the
sessions newest first, the notes, the recognizers) is merged from the parts.

Recognizers are made per (level, namespaces) when first asked for and kept for the snapshot's
life. When a snapshot replaces another, ``carry_recognizers`` makes the ones the old snapshot
used, from the new parts and handing the old recognizer over (its per-word corrections stay
valid where the changed agent did not touch them), so the first prompt after a change costs
what a warm one does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from bourdon.formats.reading import ReadProblem
from bourdon.model import SUFFIX, fold
from bourdon.query.agentpart import AgentPart
from bourdon.query.fuzzy import loose
from bourdon.query.recognition import Recognizer
from bourdon.query.rows import AgentView, EntityRow, NoteRow, SessionRow, WorkstreamRow
from bourdon.query.validity import Lifecycle

# Recognizers a new snapshot makes ahead for the (level, namespaces) keys the old one served.
CARRIED: Final = 8

RecognizerKey = tuple[int, frozenset[str] | None]


class Match(NamedTuple):
    """An entity row that matched a query, and how."""

    row: EntityRow
    kind: str  # exact | alias | fuzzy
    score: float


class Snapshot:
    """Every served agent as of one refresh, with the lookups queries need. Never edited
    after it is built, except its cache of recognizers (each made once, then only read)."""

    def __init__(
        self,
        parts: Mapping[str, AgentPart],
        *,
        problems: Mapping[str, str],
        row_problems: Mapping[str, tuple[ReadProblem, ...]],
        head: str | None,
        generation: int,
        drifting: list[dict[str, Any]],
        day: str = "",
    ) -> None:
        self.day = day  # the UTC day (YYYY-MM-DD) validity is judged for: Index.today()
        self.parts = {agent: parts[agent] for agent in sorted(parts)}
        self.agents: dict[str, AgentView] = {a: p.view for a, p in self.parts.items()}
        self.problems = dict(problems)  # file name -> why the whole manifest is skipped
        self.row_problems = dict(row_problems)  # file name -> rows left out
        self.head = head  # the commit the branch held when the files were read
        self.generation = generation
        self.drifting = drifting
        views = self.agents.values()
        self.entity_rows: list[EntityRow] = [row for v in views for row in v.entities]
        self.sessions: list[SessionRow] = sorted(
            (s for v in views for s in v.sessions), key=lambda s: s.key, reverse=True
        )
        self.notes: list[NoteRow] = sorted(
            (n for v in views for n in v.notes), key=lambda n: n.key, reverse=True
        )
        self.workstreams: list[WorkstreamRow] = [w for v in views for w in v.workstreams]
        self._lifecycle: Lifecycle | None = None
        self._recognizers: dict[RecognizerKey, Recognizer] = {}
        self._handover: Snapshot | None = None  # the day before's, whose recognizers we reuse
        self._used: dict[RecognizerKey, None] = {}  # keys in the order last asked for
        self._lock = threading.Lock()

    @property
    def lifecycle(self) -> Lifecycle:
        """The day and the ``supersedes`` links of these rows (made when first asked for)."""
        found = self._lifecycle
        if found is None:
            found = self._lifecycle = Lifecycle(self.entity_rows, self.day)
        return found

    def for_day(self, day: str) -> Snapshot:
        """These very parts judged for another day: recognizers are made again when asked
        for (rows may have expired or begun), each handed the old day's for its corrections."""
        new = Snapshot(
            self.parts,
            problems=self.problems,
            row_problems=self.row_problems,
            head=self.head,
            generation=self.generation,
            drifting=self.drifting,
            day=day,
        )
        new._handover = self
        new._lifecycle = self.lifecycle.on(day)
        self._handover = None  # one day back is enough: no chain of old snapshots is kept
        return new

    def with_head(self, head: str | None, drifting: list[dict[str, Any]]) -> Snapshot:
        """This snapshot with a new commit or new drift verdicts but the same manifests (a
        commit that changed no served file): the parts, rows and recognizers are all right."""
        if head == self.head and drifting == self.drifting:
            return self
        new = Snapshot(
            self.parts,
            problems=self.problems,
            row_problems=self.row_problems,
            head=head,
            generation=self.generation,
            drifting=drifting,
            day=self.day,
        )
        new._lifecycle = self._lifecycle
        new.share_recognizers(self)
        return new

    @classmethod
    def empty(cls) -> Snapshot:
        return cls({}, problems={}, row_problems={}, head=None, generation=0, drifting=[])

    # -- warnings --------------------------------------------------------------------------

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

    # -- lookups ---------------------------------------------------------------------------

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
        parts = self.parts.values()
        # Only rows the caller may see count: a hidden exact match must not change what a
        # caller is told (whether near misses are offered would give it away).
        found: list[Match] = [
            Match(r, "exact", 100.0) for p in parts for r in p.by_name.get(folded, ()) if visible(r)
        ]
        found += [
            Match(r, "alias", 95.0) for p in parts for r in p.by_alias.get(folded, ()) if visible(r)
        ]
        if found or not fuzzy:
            return found
        seen: set[int] = set()
        squeezed = loose(query)
        for part in parts:
            for row in part.by_loose.get(squeezed, ()):
                if id(row) not in seen and visible(row):
                    seen.add(id(row))
                    found.append(Match(row, "fuzzy", 90.0))
        near: dict[str, int] = {}
        for part in parts:
            for name, distance in part.near.near(folded):
                near[name] = distance
        for name, distance in sorted(near.items(), key=lambda item: (item[1], item[0])):
            score = round(90.0 * (1 - distance / max(len(name), len(folded))), 1)
            rows = [r for p in parts for r in p.by_name.get(name, ())]
            rows += [r for p in parts for r in p.by_alias.get(name, ())]
            for row in rows:
                if id(row) not in seen and visible(row):
                    seen.add(id(row))
                    found.append(Match(row, "fuzzy", score))
        return found

    # -- recognition -----------------------------------------------------------------------

    def recognizer_for(self, level: int, agents: frozenset[str] | None) -> Recognizer:
        """Recognition over only the names a caller may see, so hidden names can neither be
        matched nor change what is matched (a longer hidden name, a typo corrected towards
        one). Made once per (level, namespaces) for this snapshot."""
        key = (level, agents)
        found = self._recognizers.get(key)
        if found is None:
            before = self._handover
            found = self._make(key, previous=before._recognizers.get(key) if before else None)
        self._used.pop(key, None)
        self._used[key] = None
        return found

    def carry_recognizers(self, old: Snapshot) -> None:
        """Make ahead the recognizers ``old`` served lately, handing each its old self."""
        for key in list(old._used)[-CARRIED:]:
            previous = old._recognizers.get(key)
            if previous is not None and key not in self._recognizers:
                self._make(key, previous=previous)
                self._used[key] = None

    def share_recognizers(self, old: Snapshot) -> None:
        """Take ``old``'s recognizers as they are: this snapshot has the very same parts
        (and is for the same day; else they are made again)."""
        if old.day != self.day:
            self._handover = old
            return
        with old._lock:
            self._recognizers.update(old._recognizers)
            self._used.update(old._used)

    def _make(self, key: RecognizerKey, previous: Recognizer | None) -> Recognizer:
        level, agents = key
        with self._lock:
            found = self._recognizers.get(key)
            if found is None:
                tables = [
                    part.table(level, self.day)
                    for agent, part in self.parts.items()
                    if agents is None or agent in agents
                ]
                found = Recognizer(tables, previous=previous)
                self._recognizers[key] = found
            return found
