"""Which FTS5 table answers a caller, kept in step with the index one agent at a time.

- A caller who may read every namespace is answered from the shared file's band table of its
  level (``searchdocs``). Before a search the file is brought up to the index's snapshot: an
  agent whose digest moved has its documents replaced (one short transaction per agent), an
  agent gone has them removed, the others are not touched. ``PRAGMA data_version`` tells when
  another process wrote the file, so a search with nothing new touches no table of it.
- A caller who reads only some namespaces, or never sees prompts, is answered from a table in
  memory made of exactly the rows it may see, kept for the next call of the same caller while
  those agents' digests stay the same: a shared table would rank with other agents' rows.
- When the file is locked past its busy timeout, or cannot be made at all, the search is
  answered from such an in-memory table too: slower, never a failure.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, NamedTuple

from bourdon.access.visibility import Access
from bourdon.query.rows import AgentView
from bourdon.query.searchdocs import (
    BANDS,
    SCHEMA,
    SCHEMA_VERSION,
    doc_key,
    doc_of,
    insert,
    rank_sql,
    rows_of,
    table_sql,
)
from bourdon.query.snapshot import Snapshot
from bourdon.store.searchfile import is_damage, open_search_file, reset_search_file

KEPT: Final = 8  # in-memory tables kept, one per recent restricted caller
log = logging.getLogger("bourdon.search")


class Table(NamedTuple):
    conn: sqlite3.Connection
    name: str
    lock: threading.Lock  # one statement stream per connection at a time


class SearchTables:
    """The search tables of one library: its shared file and a few in-memory tables."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._synced: tuple[int, object] | None = None  # (data_version, snapshot) in step
        self._memory: OrderedDict[Hashable, Table] = OrderedDict()
        self.updated: list[str] = []  # agents whose documents the last sync replaced

    @contextmanager
    def table_for(
        self, state: Snapshot, access: Access, *, memory: bool = False
    ) -> Iterator[Table]:
        """The table holding exactly the rows ``access`` may see, locked for the caller
        (``memory``: made in memory, whoever the caller)."""
        restricted = access.agents is not None or access.keep_home or memory
        table = None if restricted else self._shared(state, int(access.level))
        if table is None:
            table = self._in_memory(state, access)
        with table.lock:
            yield table

    # -- the shared file ---------------------------------------------------------------

    def _shared(self, state: Snapshot, level: int) -> Table | None:
        with self._lock:
            try:
                conn = self._open()
                self._sync(conn, state)
            except sqlite3.Error as exc:
                if is_damage(exc):
                    log.warning("the search index was damaged (%s); rebuilding it", exc)
                    self._drop()
                    try:
                        conn = self._open()
                        self._sync(conn, state)
                    except sqlite3.Error:
                        self._drop()
                        return None
                else:  # locked by another process past the busy timeout
                    return None
            return Table(conn, BANDS[level], self._lock)

    def damaged(self, exc: sqlite3.DatabaseError) -> None:
        """A search found the file damaged while reading it: the next one makes it again."""
        if is_damage(exc):
            log.warning("the search index was damaged (%s); rebuilding it", exc)
            with self._lock:
                self._drop()

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_search_file(self.root, SCHEMA, SCHEMA_VERSION)
            self._synced = None
        return self._conn

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn, self._synced = None, None
        reset_search_file(self.root)

    def _sync(self, conn: sqlite3.Connection, state: Snapshot) -> None:
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if self._synced is not None and self._synced == (version, state):
            return
        stored = dict(conn.execute("SELECT agent, digest FROM agents").fetchall())
        updated = []
        for agent in sorted(set(stored) - set(state.parts)):
            self._replace(conn, agent, None)
            updated.append(agent)
        for agent, part in state.parts.items():
            if stored.get(agent) != part.view.digest:
                self._replace(conn, agent, part.view)
                updated.append(agent)
        self.updated = updated
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        self._synced = (version, state)

    @staticmethod
    def _replace(conn: sqlite3.Connection, agent: str, view: AgentView | None) -> None:
        """One agent's documents brought up to ``view`` in one short transaction: those that
        changed removed, the new ones added, the rest untouched (all removed when ``view`` is
        None)."""
        docs = {doc_key(d): d for d in map(doc_of, rows_of(view))} if view is not None else {}
        conn.execute("BEGIN IMMEDIATE")
        try:
            stored = conn.execute("SELECT id, key FROM docs WHERE agent = ?", (agent,)).fetchall()
            gone = [(i,) for i, key in stored if key not in docs]
            kept = {key for _, key in stored}
            for band in BANDS:
                conn.executemany(f"DELETE FROM {band} WHERE rowid = ?", gone)
            conn.executemany("DELETE FROM docs WHERE id = ?", gone)
            added = [(key, d) for key, d in docs.items() if key not in kept]
            (start,) = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM docs").fetchone()
            numbered = [(i, key, d) for i, (key, d) in enumerate(added, start)]
            conn.executemany(
                "INSERT INTO docs(id, agent, key) VALUES (?, ?, ?)",
                ((i, agent, key) for i, key, _ in numbered),
            )
            for level, band in enumerate(BANDS):
                insert(conn, band, ((i, d) for i, _, d in numbered if d.visibility <= level))
            conn.execute("DELETE FROM agents WHERE agent = ?", (agent,))
            if view is not None:
                conn.execute(
                    "INSERT INTO agents(agent, digest) VALUES (?, ?)", (agent, view.digest)
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- tables in memory --------------------------------------------------------------

    def _in_memory(self, state: Snapshot, access: Access) -> Table:
        parts = [(a, p) for a, p in state.parts.items() if access.allows_agent(a)]
        key = (
            int(access.level),
            access.agents,
            access.keep_home,
            tuple((a, p.view.digest) for a, p in parts),
        )
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
                return found
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute(table_sql("docs"))
        conn.execute(rank_sql("docs"))
        docs = (
            doc_of(row) for _, part in parts for row in rows_of(part.view) if access.allows(row)
        )
        insert(conn, "docs", enumerate(docs, 1))
        conn.commit()
        table = Table(conn, "docs", threading.Lock())
        with self._lock:
            self._memory[key] = table
            while len(self._memory) > KEPT:
                self._memory.popitem(last=False)
        return table


_TABLES: dict[Path, SearchTables] = {}
_TABLES_LOCK = threading.Lock()


def tables_of(root: Path) -> SearchTables:
    """The one ``SearchTables`` of the library at ``root`` in this process."""
    with _TABLES_LOCK:
        found = _TABLES.get(root)
        if found is None:
            found = _TABLES[root] = SearchTables(root)
        return found
