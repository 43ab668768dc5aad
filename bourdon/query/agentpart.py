"""One agent's part of the index: its rows and the lookups over them, built once per file version.

A change to one manifest rebuilds only that agent's part (DESIGN section 5); the index's other
parts are reused as they are. A part never changes once built: a new version of the file makes
a new part, so a query holding the old one keeps a consistent view while the new one is built.

- ``by_name`` / ``by_alias`` / ``by_loose``: folded name (or alias, or the name without
  punctuation and spaces) -> this agent's entity rows, in manifest order;
- ``near``: a ``fuzzy.NearIndex`` of its names and aliases, for near misses;
- ``table(level, day)``: recognition's ``NameTable`` of the names and aliases of the rows a
  caller at ``level`` may see that hold on ``day`` (``bourdon.query.validity``: an expired row,
  or one not yet valid, is never recognised). Tables of an earlier day are dropped.

``by_loose``, ``near`` and the tables are made when first asked for, so a start-up that only
needs exact lookups does not pay for them; the server makes them in a thread once it has
answered its opening calls, and the index in its refresh thread before it swaps a new part
in, so queries do not wait for them after that.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Final

from bourdon.model import fold
from bourdon.query.fuzzy import NearIndex, loose
from bourdon.query.recognition import NameTable
from bourdon.query.rows import AgentView, EntityRow
from bourdon.query.validity import live

# Names shorter than this only match exactly: "mark" is not a typo of "park".
MIN_FUZZY_LENGTH: Final = 6
MAX_EDITS: Final = 2


class AgentPart:
    """The index's lookups over one agent's served rows."""

    def __init__(self, view: AgentView) -> None:
        self.view = view
        self.agent = view.agent_id
        by_name: dict[str, list[EntityRow]] = defaultdict(list)
        by_alias: dict[str, list[EntityRow]] = defaultdict(list)
        for row in view.entities:
            by_name[fold(row.name)].append(row)
            for alias in row.aliases:
                by_alias[fold(alias)].append(row)
        self.by_name = dict(by_name)
        self.by_alias = dict(by_alias)
        self._loose: dict[str, list[EntityRow]] | None = None
        self._near: NearIndex | None = None
        self._tables: dict[tuple[int, str], NameTable] = {}
        self._lock = threading.Lock()

    @property
    def by_loose(self) -> dict[str, list[EntityRow]]:
        """Names and aliases without case, spaces or punctuation (made when first needed)."""
        found = self._loose
        if found is None:
            loosened: dict[str, list[EntityRow]] = defaultdict(list)
            for row in self.view.entities:
                loosened[loose(row.name)].append(row)
                for alias in row.aliases:
                    loosened[loose(alias)].append(row)
            found = self._loose = dict(loosened)
        return found

    @property
    def near(self) -> NearIndex:
        """The typo index of this agent's names and aliases (made when first needed)."""
        found = self._near
        if found is None:
            with self._lock:
                found = self._near
                if found is None:
                    words = {*self.by_name, *self.by_alias}
                    found = NearIndex(words, budget=MAX_EDITS, min_length=MIN_FUZZY_LENGTH)
                    self._near = found
        return found

    def table(self, level: int, day: str) -> NameTable:
        """Recognition's table of the names and aliases of the rows visible at ``level`` that
        hold on ``day``."""
        key = (level, day)
        found = self._tables.get(key)
        if found is None:
            with self._lock:
                found = self._tables.get(key)
                if found is None:
                    found = NameTable.build(
                        (row, text, is_alias, row.name, row.type or "")
                        for row in self.view.entities
                        if row.visibility <= level and live(row, day)
                        for text, is_alias in ((row.name, False), *((a, True) for a in row.aliases))
                    )
                    # A new day: the tables of the old one will not be asked for again.
                    self._tables = {k: t for k, t in self._tables.items() if k[1] == day}
                    self._tables[key] = found
        return found

    def warm(self, level: int, day: str) -> None:
        """Make the typo index and the recognition table at ``level`` now, so that no query
        waits for them (the index's refresh thread calls this before it swaps the part in)."""
        self.by_loose  # noqa: B018 - made on first access
        self.near  # noqa: B018
        self.table(level, day)
